import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export type HttpResult = APIGatewayProxyStructuredResultV2 & { statusCode: number; headers: Record<string, string> };

const JSON_TYPE = 'application/json; charset=utf-8';

/** 200 with a JSON body. */
export function ok(body: unknown, headers: Record<string, string> = {}): HttpResult {
  return json(200, body, headers);
}

/** A JSON response with any status. */
export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return { statusCode, headers: { 'content-type': JSON_TYPE, ...headers }, body: JSON.stringify(body) };
}

/** 204, no body. */
export function noContent(): HttpResult {
  return { statusCode: 204, headers: {} };
}

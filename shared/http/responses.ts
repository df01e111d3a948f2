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

/** A redirect; 303 after a form POST so the browser follows with GET. */
export function redirect(location: string, status: 302 | 303 = 302, cookies: string[] = []): HttpResult {
  return {
    statusCode: status,
    headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
    ...(cookies.length ? { cookies } : {}),
  };
}

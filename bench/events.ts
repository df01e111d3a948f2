import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { lambdaContext } from '#local/lambda-context';

// API Gateway HTTP API (payload format 2.0) events, as the gateway hands them to a function:
// lower-case header names, cookies in their own array, verified JWT claims under
// requestContext.authorizer for resource routes.

export interface EventSpec {
  /** Route key of the route table, e.g. `GET /devices/{device_id}`, or `$default`. */
  routeKey: string;
  /** The concrete path the client asked for. */
  path: string;
  method?: string;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  cookies?: string[];
  body?: string;
  /** Verified access-token claims (resource routes only). */
  claims?: { sub: string; client_id: string; scope: string };
  host?: string;
}

export function makeEvent(spec: EventSpec): APIGatewayProxyEventV2 {
  const method = spec.method ?? (spec.routeKey.split(' ')[0] === 'ANY' || spec.routeKey === '$default' ? 'GET' : spec.routeKey.split(' ')[0]!);
  const host = spec.host ?? 'api.example.com';
  const rawQueryString = spec.query ? new URLSearchParams(spec.query).toString() : '';
  const now = Date.now();
  return {
    version: '2.0',
    routeKey: spec.routeKey,
    rawPath: spec.path,
    rawQueryString,
    ...(spec.cookies ? { cookies: spec.cookies } : {}),
    headers: {
      accept: '*/*',
      'accept-encoding': 'gzip, deflate',
      'content-length': String(spec.body ? Buffer.byteLength(spec.body) : 0),
      host,
      'user-agent': 'bench/1.0',
      'x-amzn-trace-id': `Root=1-${now.toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)}`,
      'x-forwarded-for': '192.0.2.10',
      'x-forwarded-port': '443',
      'x-forwarded-proto': 'https',
      ...(spec.cookies ? { cookie: spec.cookies.join('; ') } : {}),
      ...spec.headers,
    },
    ...(spec.query ? { queryStringParameters: spec.query } : {}),
    ...(spec.pathParameters ? { pathParameters: spec.pathParameters } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'bench',
      domainName: host,
      domainPrefix: host.split('.')[0]!,
      http: { method, path: spec.path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.10', userAgent: 'bench/1.0' },
      requestId: randomUUID(),
      routeKey: spec.routeKey,
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
      ...(spec.claims
        ? {
            authorizer: {
              jwt: {
                claims: {
                  ...spec.claims,
                  iss: 'https://auth.example.com', aud: 'https://api.example.com', jti: randomUUID(),
                  iat: String(Math.floor(now / 1000)), exp: String(Math.floor(now / 1000) + 3600),
                },
                scopes: spec.claims.scope.split(' '),
              },
            },
          }
        : {}),
    },
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    isBase64Encoded: false,
  } as APIGatewayProxyEventV2;
}

/** A form POST (token endpoint, login, consent). */
export function formBody(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

export const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' };

/** HTTP Basic credentials as OAuth clients send them (RFC 6749 §2.3.1: form-encoded parts). */
export function basicAuth(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}

/** A minimal Lambda context. */
/** The Lambda context of one benchmark call. */
export const benchContext = (functionName: string) => lambdaContext(functionName, randomUUID());

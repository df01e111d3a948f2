import { createHash, randomUUID } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEventV2, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { lambdaContext } from '#local/lambda-context';

// API Gateway HTTP API (payload format 2.0) events, as the gateway hands them to a function:
// lower-case header names, cookies in their own array, verified JWT claims under
// requestContext.authorizer for resource routes. And the events of the functions without an HTTP
// route, as Lambda's event source mappings hand them over: a DynamoDB stream batch, an SQS batch.

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
  /** The client's address (default 192.0.2.10): calls that a per-address limit counts each come from their own. */
  sourceIp?: string;
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
      'x-forwarded-for': spec.sourceIp ?? '192.0.2.10',
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
      http: { method, path: spec.path, protocol: 'HTTP/1.1', sourceIp: spec.sourceIp ?? '192.0.2.10', userAgent: 'bench/1.0' },
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

const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';

/**
 * A stream batch of one MODIFY record of a table item (new and old images, the stream's view type),
 * as Lambda's DynamoDB event source mapping delivers it: images in the attribute-value form, a
 * fresh `eventID` (the fan-out derives webhook ids from it).
 */
export function streamModifyEvent(oldItem: Record<string, unknown>, newItem: Record<string, unknown>): DynamoDBStreamEvent {
  const image = (item: Record<string, unknown>) => marshall(item, { removeUndefinedValues: true }) as Record<string, AttributeValue>;
  const NewImage = image(newItem);
  const OldImage = image(oldItem);
  return {
    Records: [{
      eventID: randomUUID().replace(/-/g, ''), eventName: 'MODIFY', eventVersion: '1.1', eventSource: 'aws:dynamodb', awsRegion: REGION,
      dynamodb: {
        ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
        Keys: { pk: NewImage.pk!, sk: NewImage.sk! } as never,
        NewImage: NewImage as never, OldImage: OldImage as never,
        SequenceNumber: String(Date.now()).padEnd(21, '0'), SizeBytes: Buffer.byteLength(JSON.stringify([NewImage, OldImage])),
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
      eventSourceARN: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/bench/stream/2026-01-01T00:00:00.000`,
    }],
  };
}

/** An SQS batch of one message (`body`), first received, as Lambda's SQS event source mapping delivers it. */
export function sqsEvent(body: string): SQSEvent {
  const now = String(Date.now());
  return {
    Records: [{
      messageId: randomUUID(), receiptHandle: randomUUID(), body,
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: now, SenderId: 'AROAEXAMPLE:fan-out-events', ApproximateFirstReceiveTimestamp: now },
      messageAttributes: {}, md5OfBody: createHash('md5').update(body).digest('hex'),
      eventSource: 'aws:sqs', eventSourceARN: `arn:aws:sqs:${REGION}:${ACCOUNT}:webhook-deliveries`, awsRegion: REGION,
    }],
  };
}

/** The Lambda context of one benchmark call. */
export const benchContext = (functionName: string) => lambdaContext(functionName, randomUUID());

import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { ValidationError } from '#shared/domain/errors';
import { AppError, MethodNotAllowedError, NotFoundError } from '#shared/errors';
import { apiHandler, MAX_BODY_BYTES, type ApiRequest } from '#shared/http/http';
import { htmlHandler } from '#shared/views/page-wrapper';
import { json, noContent, ok, type HttpResult } from '#shared/http/responses';
import { API_SECURITY_HEADERS } from '#shared/http/security-headers';

const DEFAULT_CLAIMS = { sub: 'user-1', client_id: 'client-1', scope: 'read_device write_device' };

interface EventOverrides {
  claims?: Record<string, string> | null;
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
  pathParameters?: Record<string, string>;
  method?: string;
}

/** An API Gateway payload 2.0 event as the JWT authorizer hands it to a function. */
function makeEvent(overrides: EventOverrides = {}): APIGatewayProxyEventV2 {
  const claims = overrides.claims === undefined ? DEFAULT_CLAIMS : overrides.claims;
  const method = overrides.method ?? 'GET';
  return {
    version: '2.0',
    routeKey: `${method} /devices/{device_id}`,
    rawPath: '/devices/0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d',
    rawQueryString: '',
    headers: overrides.headers ?? { host: 'api.example.com' },
    ...(overrides.pathParameters ? { pathParameters: overrides.pathParameters } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: { method, path: '/devices/x', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
      requestId: 'request-1',
      routeKey: `${method} /devices/{device_id}`,
      stage: '$default',
      time: '01/Jan/2026:00:00:00 +0000',
      timeEpoch: 1_767_225_600_000,
      ...(claims ? { authorizer: { jwt: { claims, scopes: null } } } : {}),
    },
    ...(overrides.body === undefined ? {} : { body: overrides.body }),
    isBase64Encoded: overrides.isBase64Encoded ?? false,
  } as APIGatewayProxyEventV2;
}

/** A PUT event carrying a JSON body, as the gateway builds it. */
function makeJsonEvent(body: string, overrides: EventOverrides = {}): APIGatewayProxyEventV2 {
  return makeEvent({ method: 'PUT', headers: { 'content-type': 'application/json' }, body, ...overrides });
}

const context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'test',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:test',
  memoryLimitInMB: '256',
  awsRequestId: 'request-1',
  logGroupName: '/aws/lambda/test',
  logStreamName: 'test',
  getRemainingTimeInMillis: () => 10_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
} satisfies Context;

/** A handler that records what it was given and answers 200 with it. */
function echoHandler(options: { body?: 'json' } = {}) {
  const seen = vi.fn<(request: ApiRequest<unknown>) => void>();
  const handler = apiHandler<unknown>(async (request) => {
    seen(request);
    return ok({ sub: request.claims.sub, body: request.body });
  }, options);
  return { handler, seen };
}

function throwing(error: unknown) {
  return apiHandler(async (): Promise<HttpResult> => {
    throw error;
  });
}

function parse(result: HttpResult): unknown {
  return JSON.parse(String(result.body));
}

/** A JSON object body of exactly `bytes` UTF-8 bytes. */
function jsonBodyOfSize(bytes: number, filler = 'x'): string {
  const frame = '{"name":""}';
  const fillerBytes = Buffer.byteLength(filler);
  const count = Math.floor((bytes - frame.length) / fillerBytes);
  const body = `{"name":"${filler.repeat(count)}${'y'.repeat(bytes - frame.length - count * fillerBytes)}"}`;
  expect(Buffer.byteLength(body)).toBe(bytes);
  return body;
}

function expectEnvelope(result: HttpResult, status: number, code: string) {
  expect(result.statusCode).toBe(status);
  expect(result.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = parse(result) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  expect(body.error).toBe(code);
  expect(typeof body.error_description).toBe('string');
  expect(body.error_description).not.toBe('');
  return body as { error: string; error_description: string };
}

describe('apiHandler', () => {
  describe('claims', () => {
    it('hands the verified claims and path parameters to the handler', async () => {
      // Prepare
      const { handler, seen } = echoHandler();
      const event = makeEvent({ pathParameters: { device_id: 'abc' } });

      // Act
      const result = await handler(event, context);

      // Assess
      expect(result.statusCode).toBe(200);
      expect(parse(result)).toEqual({ sub: 'user-1' });
      const request = seen.mock.calls[0]![0];
      expect(request.claims).toEqual({ sub: 'user-1', clientId: 'client-1', scopes: ['read_device', 'write_device'] });
      expect(request.path).toEqual({ device_id: 'abc' });
      expect(request.event).toBe(event);
    });

    it.each([
      ['no authorizer context', null],
      ['claims without sub', { client_id: 'client-1', scope: 'read_device' }],
      ['an empty sub', { sub: '', client_id: 'client-1', scope: 'read_device' }],
    ])('answers 401 invalid_token with www-authenticate for %s, without running the handler', async (_, claims) => {
      // Prepare
      const { handler, seen } = echoHandler();

      // Act
      const result = await handler(makeEvent({ claims }), context);

      // Assess
      expectEnvelope(result, 401, 'invalid_token');
      expect(result.headers['www-authenticate']).toMatch(/^Bearer /);
      expect(result.headers['www-authenticate']).toContain('error="invalid_token"');
      expect(seen).not.toHaveBeenCalled();
    });
  });

  describe('JSON body guard', () => {
    it('parses a JSON object body for the handler', async () => {
      // Prepare
      const { handler, seen } = echoHandler({ body: 'json' });

      // Act
      const result = await handler(makeJsonEvent('{"name":"Kitchen","active":true}'), context);

      // Assess
      expect(result.statusCode).toBe(200);
      expect(seen.mock.calls[0]![0].body).toEqual({ name: 'Kitchen', active: true });
    });

    it(`accepts a body of exactly ${MAX_BODY_BYTES} bytes`, async () => {
      // Prepare
      const { handler, seen } = echoHandler({ body: 'json' });

      // Act
      const result = await handler(makeJsonEvent(jsonBodyOfSize(MAX_BODY_BYTES)), context);

      // Assess
      expect(result.statusCode).toBe(200);
      expect(seen).toHaveBeenCalledOnce();
    });

    it('answers 413 for one byte more, without running the handler', async () => {
      // Prepare
      const { handler, seen } = echoHandler({ body: 'json' });

      // Act
      const result = await handler(makeJsonEvent(jsonBodyOfSize(MAX_BODY_BYTES + 1)), context);

      // Assess
      expectEnvelope(result, 413, 'invalid_request');
      expect(seen).not.toHaveBeenCalled();
    });

    it('counts UTF-8 bytes, not characters', async () => {
      // Prepare: fewer than 16 Ki characters, but more than 16 KiB.
      const { handler, seen } = echoHandler({ body: 'json' });
      const body = jsonBodyOfSize(MAX_BODY_BYTES + 2, 'é');
      expect(body.length).toBeLessThan(MAX_BODY_BYTES);

      // Act
      const result = await handler(makeJsonEvent(body), context);

      // Assess
      expectEnvelope(result, 413, 'invalid_request');
      expect(seen).not.toHaveBeenCalled();
    });

    it('checks the size before the media type', async () => {
      // Prepare
      const { handler } = echoHandler({ body: 'json' });

      // Act
      const result = await handler(makeJsonEvent('x'.repeat(MAX_BODY_BYTES + 1), { headers: { 'content-type': 'text/plain' } }), context);

      // Assess
      expectEnvelope(result, 413, 'invalid_request');
    });

    it.each([
      ['no content-type', {}],
      ['text/plain', { 'content-type': 'text/plain' }],
      ['form encoding', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['application/jsonp', { 'content-type': 'application/jsonp' }],
      ['application/json-patch+json', { 'content-type': 'application/json-patch+json' }],
      ['an empty content-type', { 'content-type': '' }],
    ])('answers 415 for %s, without running the handler', async (_, headers) => {
      // Prepare
      const { handler, seen } = echoHandler({ body: 'json' });

      // Act
      const result = await handler(makeJsonEvent('{"name":"Kitchen"}', { headers }), context);

      // Assess
      const body = expectEnvelope(result, 415, 'invalid_request');
      expect(body.error_description).toContain('application/json');
      expect(seen).not.toHaveBeenCalled();
    });

    it.each(['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON'])(
      'accepts content-type %s',
      async (contentType) => {
        // Prepare
        const { handler, seen } = echoHandler({ body: 'json' });

        // Act
        const result = await handler(makeJsonEvent('{"sound":false}', { headers: { 'content-type': contentType } }), context);

        // Assess
        expect(result.statusCode).toBe(200);
        expect(seen.mock.calls[0]![0].body).toEqual({ sound: false });
      },
    );

    it.each([
      ['truncated JSON', '{"name":'],
      ['a trailing comma', '{"name":"Kitchen",}'],
      ['single quotes', "{'name':'Kitchen'}"],
      ['plain text', 'name=Kitchen'],
      ['a forbidden __proto__ key', '{"__proto__":{"admin":true}}'],
    ])('answers 400 for %s, without running the handler', async (_, text) => {
      // Prepare
      const { handler, seen } = echoHandler({ body: 'json' });

      // Act
      const result = await handler(makeJsonEvent(text), context);

      // Assess
      expectEnvelope(result, 400, 'invalid_request');
      expect(seen).not.toHaveBeenCalled();
    });

    it.each([
      ['no body', undefined],
      ['an empty body', ''],
    ])('answers 400 for %s', async (_, body) => {
      // Prepare
      const { handler, seen } = echoHandler({ body: 'json' });

      // Act
      const result = await handler(makeEvent({ method: 'PUT', headers: { 'content-type': 'application/json' }, body }), context);

      // Assess
      expectEnvelope(result, 400, 'invalid_request');
      expect(seen).not.toHaveBeenCalled();
    });

    it('decodes a base64 body', async () => {
      // Prepare
      const { handler, seen } = echoHandler({ body: 'json' });
      const body = Buffer.from('{"place":"Séjour"}').toString('base64');

      // Act
      const result = await handler(makeJsonEvent(body, { isBase64Encoded: true }), context);

      // Assess
      expect(result.statusCode).toBe(200);
      expect(seen.mock.calls[0]![0].body).toEqual({ place: 'Séjour' });
    });

    it('measures a base64 body by its decoded size', async () => {
      // Prepare: the encoded text is over 16 KiB, the body itself is not.
      const { handler, seen } = echoHandler({ body: 'json' });
      const encoded = Buffer.from(jsonBodyOfSize(13_000)).toString('base64');
      expect(encoded.length).toBeGreaterThan(MAX_BODY_BYTES);

      // Act
      const result = await handler(makeJsonEvent(encoded, { isBase64Encoded: true }), context);

      // Assess
      expect(result.statusCode).toBe(200);
      expect(seen).toHaveBeenCalledOnce();
    });

    it('answers 413 for a base64 body over 16 KiB once decoded', async () => {
      // Prepare
      const { handler, seen } = echoHandler({ body: 'json' });
      const encoded = Buffer.from(jsonBodyOfSize(MAX_BODY_BYTES + 1)).toString('base64');

      // Act
      const result = await handler(makeJsonEvent(encoded, { isBase64Encoded: true }), context);

      // Assess
      expectEnvelope(result, 413, 'invalid_request');
      expect(seen).not.toHaveBeenCalled();
    });

    it('answers 400 for a base64 body that is not JSON', async () => {
      // Prepare
      const { handler } = echoHandler({ body: 'json' });

      // Act
      const result = await handler(makeJsonEvent(Buffer.from('{not json').toString('base64'), { isBase64Encoded: true }), context);

      // Assess
      expectEnvelope(result, 400, 'invalid_request');
    });

    it('leaves routes without a JSON body alone', async () => {
      // Prepare: a GET carrying stray text and no content-type.
      const { handler, seen } = echoHandler();

      // Act
      const result = await handler(makeEvent({ body: 'not json' }), context);

      // Assess
      expect(result.statusCode).toBe(200);
      expect(seen.mock.calls[0]![0].body).toBe('not json');
    });
  });

  describe('errors', () => {
    it('turns an AppError into the envelope with its status, code, description and headers', async () => {
      // Prepare
      const handler = throwing(new AppError('conflict', 'The device is busy.', { 'x-extra': 'kept' }));

      // Act
      const result = await handler(makeEvent(), context);

      // Assess
      expect(expectEnvelope(result, 409, 'conflict')).toEqual({ error: 'conflict', error_description: 'The device is busy.' });
      expect(result.headers['x-extra']).toBe('kept');
    });

    it.each([
      ['NotFoundError', new NotFoundError('No such device.'), 404, 'not_found', {}],
      ['MethodNotAllowedError', new MethodNotAllowedError(['GET', 'PUT']), 405, 'method_not_allowed', { allow: 'GET, PUT' }],
    ])('maps %s with its headers', async (_, error, status, code, headers) => {
      // Prepare
      const handler = throwing(error);

      // Act
      const result = await handler(makeEvent(), context);

      // Assess
      const body = expectEnvelope(result, status, code);
      expect(body.error_description).toBe(error.message);
      expect(result.headers).toMatchObject(headers);
    });

    it('answers a domain ValidationError as 400 invalid_request with its message', async () => {
      // Prepare
      const handler = throwing(new ValidationError("Member 'name' must be a string."));

      // Act
      const result = await handler(makeEvent(), context);

      // Assess
      expect(expectEnvelope(result, 400, 'invalid_request')).toEqual({
        error: 'invalid_request',
        error_description: "Member 'name' must be a string.",
      });
    });

    it('answers 500 server_error for an unknown error, with no internals in the body', async () => {
      // Prepare
      const error = new Error('connect to db-secret-host.internal failed at /var/task/secret.js');
      const handler = throwing(error);

      // Act
      const result = await handler(makeEvent(), context);

      // Assess
      const body = expectEnvelope(result, 500, 'server_error');
      expect(result.body).not.toContain('secret');
      expect(result.body).not.toContain('/var/task');
      expect(result.body).not.toContain('Error:');
      expect(result.body).not.toContain(error.stack!.split('\n')[1]!.trim());
      expect(body.error_description).toBe('An unexpected error occurred.');
    });

    it.each([
      ['a string', 'secret failure'],
      ['undefined', undefined],
      ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'secret')")],
      ['an error with a 5xx statusCode', Object.assign(new Error('secret upstream'), { statusCode: 502 })],
    ])('answers 500 server_error when the handler throws %s', async (_, thrown) => {
      // Prepare
      const handler = throwing(thrown);

      // Act
      const result = await handler(makeEvent(), context);

      // Assess
      expectEnvelope(result, 500, 'server_error');
      expect(result.body).not.toContain('secret');
    });

    it.each(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded', 'InternalServerError'])(
      'answers 503 temporarily_unavailable with retry-after for a DynamoDB %s',
      async (name) => {
        // Prepare
        const error = Object.assign(new Error('Rate of requests exceeds the allowed throughput for table secret-table'), { name, $fault: 'client' });
        const handler = throwing(error);

        // Act
        const result = await handler(makeEvent(), context);

        // Assess
        expectEnvelope(result, 503, 'temporarily_unavailable');
        expect(result.headers['retry-after']).toMatch(/^[1-9]\d*$/);
        expect(result.body).not.toContain('secret-table');
      },
    );

    it('answers 503 for a refused connection to the storage', async () => {
      // Prepare
      const handler = throwing(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' }));

      // Act
      const result = await handler(makeEvent(), context);

      // Assess
      expectEnvelope(result, 503, 'temporarily_unavailable');
      expect(result.headers['retry-after']).toBeDefined();
      expect(result.body).not.toContain('127.0.0.1');
    });

    // What the AWS SDK (node-http-handler 4.x, with awsClientConfig) throws when a dependency stalls,
    // hangs up or fails, as measured against real clients (test/integration/aws-client-limits.test.ts).
    const sdkError = (name: string, message: string, extra: Record<string, unknown>) =>
      Object.assign(new Error(message), { name, ...extra });
    const timedOut = sdkError('TimeoutError', 'a request has exceeded the configured 1000 ms requestTimeout', {
      code: 'ETIMEDOUT', $metadata: { attempts: 2, totalRetryDelay: 20 },
    });
    it.each([
      ['request timeout', timedOut],
      ['socket idle timeout in the body', sdkError('TimeoutError', 'the request socket timed out after 1000 ms of inactivity', { $metadata: { httpStatusCode: 200, attempts: 2 } })],
      ['connection timeout', sdkError('TimeoutError', 'the request socket did not establish a connection with the server within the configured timeout of 500 ms', { $metadata: { attempts: 2 } })],
      ['socket hang up', sdkError('TimeoutError', 'socket hang up', { code: 'ECONNRESET', $metadata: { attempts: 2 } })],
      ['reset connection', sdkError('Error', 'read ECONNRESET', { code: 'ECONNRESET' })],
      ['unknown host', sdkError('Error', 'getaddrinfo EAI_AGAIN dynamodb.eu-west-1.amazonaws.com', { code: 'EAI_AGAIN' })],
      ['unmodeled 503 answer', sdkError('Unknown', 'UnknownError', { $fault: 'server', $metadata: { httpStatusCode: 503, attempts: 2 } })],
      ['unparsable 500 answer', Object.assign(new SyntaxError('Unexpected token < in JSON'), { $metadata: { httpStatusCode: 500, attempts: 2 } })],
      ['429 answer', sdkError('Unknown', 'UnknownError', { $metadata: { httpStatusCode: 429 } })],
      ['KMS outage', sdkError('KMSInternalException', 'internal', { $fault: 'server', $metadata: { httpStatusCode: 500 } })],
      ['KMS dependency timeout', sdkError('DependencyTimeoutException', 'timeout', { $fault: 'server', $metadata: { httpStatusCode: 503 } })],
      ['SES throttling (a 400)', sdkError('Throttling', 'Maximum sending rate exceeded.', { $fault: 'client', $metadata: { httpStatusCode: 400 } })],
      ['error caused by a timeout', new Error('Signing failed', { cause: timedOut })],
    ])('answers 503 temporarily_unavailable with retry-after for an AWS %s', async (_, error) => {
      // Prepare
      const handler = throwing(error);

      // Act
      const result = await handler(makeEvent(), context);

      // Assess
      expectEnvelope(result, 503, 'temporarily_unavailable');
      expect(result.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    });

    it.each([
      ['ValidationException', 'One or more parameter values were invalid'],
      ['AccessDeniedException', 'User is not authorized to perform kms:Sign'],
      ['ResourceNotFoundException', 'Requested resource not found'],
    ])('answers 500 for an AWS %s, a 4xx that retrying does not cure', async (name, message) => {
      // Prepare
      const handler = throwing(sdkError(name, message, { $fault: 'client', $metadata: { httpStatusCode: 400, attempts: 1 } }));

      // Act
      const result = await handler(makeEvent(), context);

      // Assess
      expectEnvelope(result, 500, 'server_error');
      expect(result.headers['retry-after']).toBeUndefined();
    });
  });

  describe('security headers', () => {
    it('are on a 200 response', async () => {
      // Prepare
      const { handler } = echoHandler();

      // Act
      const result = await handler(makeEvent(), context);

      // Assess
      expect(result.statusCode).toBe(200);
      expect(result.headers).toMatchObject(API_SECURITY_HEADERS);
      expect(result.headers).toMatchObject({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY' });
    });

    it('are on a 204 response, which keeps no body', async () => {
      // Prepare
      const handler = apiHandler(async () => noContent());

      // Act
      const result = await handler(makeEvent(), context);

      // Assess
      expect(result.statusCode).toBe(204);
      expect(result.body).toBeUndefined();
      expect(result.headers).toMatchObject(API_SECURITY_HEADERS);
    });

    it.each([
      ['a 401 for missing claims', echoHandler().handler, makeEvent({ claims: null }), 401],
      ['a 415 from the body guard', echoHandler({ body: 'json' }).handler, makeJsonEvent('{}', { headers: {} }), 415],
      ['a 404 AppError', throwing(new NotFoundError()), makeEvent(), 404],
      ['a 500 for an unknown error', throwing(new Error('boom')), makeEvent(), 500],
      ['a 503 for throttling', throwing(Object.assign(new Error('slow down'), { name: 'ProvisionedThroughputExceededException' })), makeEvent(), 503],
    ])('are on %s', async (_, handler, event, status) => {
      // Act
      const result = await handler(event, context);

      // Assess
      expect(result.statusCode).toBe(status);
      expect(result.headers).toMatchObject(API_SECURITY_HEADERS);
    });

    it('do not override a header the handler chose', async () => {
      // Prepare
      const handler = apiHandler(async () => json(200, {}, { 'cache-control': 'private, max-age=5' }));

      // Act
      const result = await handler(makeEvent(), context);

      // Assess
      expect(result.headers['cache-control']).toBe('private, max-age=5');
      expect(result.headers['x-content-type-options']).toBe('nosniff');
    });
  });
});

describe('htmlHandler (the pages\' wrapper)', () => {
  const throwingPage = (error: unknown) => htmlHandler([], async (): Promise<HttpResult> => {
    throw error;
  });

  it('answers a stalled dependency with the 503 error page and Retry-After, as the JSON wrapper does', async () => {
    // Prepare
    const error = Object.assign(new Error('a request has exceeded the configured 1000 ms requestTimeout'), { name: 'TimeoutError', code: 'ETIMEDOUT' });

    // Act
    const result = await throwingPage(error)(makeEvent(), context);

    // Assess
    const api = await throwing(error)(makeEvent(), context);
    expect(result.statusCode).toBe(503);
    expect(result.headers['retry-after']).toBe(api.headers['retry-after']);
    expect(result.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(result.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(result.body).toContain('<p class="status">Error 503</p><h1>Temporarily unavailable</h1>');
    expect(result.body).toContain('The service is temporarily unavailable; retry later.');
    expect(result.body).not.toContain('requestTimeout');
  });

  it.each([
    ['an AppError, with its headers', new AppError('conflict', 'Already done.', { 'x-extra': 'kept' }), 409, { 'x-extra': 'kept' }, 'Something went wrong'],
    ['an unknown error', new Error('db-host-7f3a unreachable'), 500, {}, 'Something went wrong on our side'],
  ])('answers %s with the error page of its status', async (_, error, status, headers, title) => {
    // Act
    const result = await throwingPage(error)(makeEvent(), context);

    // Assess
    expect(result.statusCode).toBe(status);
    expect(result.headers).toMatchObject(headers);
    expect(result.headers['retry-after']).toBeUndefined();
    expect(result.body).toContain(`<p class="status">Error ${status}</p><h1>${title}</h1>`);
    expect(result.body).toContain('<a class="button" href="/">Go to the home page</a>');
    expect(result.body).not.toContain('db-host-7f3a');
  });
});

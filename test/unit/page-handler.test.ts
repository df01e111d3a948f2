import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ENV } from '#shared/config';
import { logger } from '#shared/log';
import type { HttpResult } from '#shared/http/responses';
import { countRequests } from '../support/count-requests';

// The page middlewares' order and answers, without a table: a request with no session cookie and no
// application to read costs no DynamoDB request (readPage reads no key), so none may be sent here.
// The modules read their environment when imported: set it first.
vi.stubEnv(ENV.tableName, 'no-table');
vi.stubEnv(ENV.issuer, 'https://auth.example');
vi.stubEnv(ENV.audience, 'https://api.example');
vi.stubEnv(ENV.dynamodbEndpoint, 'http://127.0.0.1:9');
const { pageHandler } = await import('#shared/pages/page-handler');
const { doc } = await import('#shared/runtime');

const CSRF = 'c'.repeat(43);

/** A browser's request to the page at `path`: a form post when `form` is given. */
function request(method: 'GET' | 'POST', path: string, options: { form?: Record<string, string>; cookies?: string; contentType?: string } = {}): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: `${method} ${path}`,
    rawPath: path,
    rawQueryString: '',
    // Payload 2.0 gives the cookies apart from the headers.
    ...(options.cookies ? { cookies: options.cookies.split('; ') } : {}),
    headers: {
      host: 'auth.example',
      ...(options.form ? { 'content-type': options.contentType ?? 'application/x-www-form-urlencoded' } : {}),
    },
    requestContext: {
      accountId: '123456789012', apiId: 'auth', domainName: 'auth.example', domainPrefix: 'auth',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
      requestId: 'request-1', routeKey: `${method} ${path}`, stage: '$default', time: '01/Jan/2026:00:00:00 +0000', timeEpoch: 1_767_225_600_000,
    },
    ...(options.form ? { body: new URLSearchParams(options.form).toString() } : {}),
    isBase64Encoded: false,
  } as APIGatewayProxyEventV2;
}

/** A fresh Lambda context per call, as Lambda gives one. */
const context = () => ({ awsRequestId: 'request-1', getRemainingTimeInMillis: () => 10_000 }) as unknown as Context;
const done: HttpResult = { statusCode: 200, headers: {}, body: 'the page' };

describe('pageHandler', () => {
  let requests: ReturnType<typeof countRequests>;
  beforeAll(() => {
    requests = countRequests(doc);
  });
  afterAll(() => requests.detach());
  beforeEach(() => requests.reset());

  describe('a form that declares csrf', () => {
    const page = vi.fn(async () => done);
    const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account' }, page);
    beforeEach(() => page.mockClear());

    it.each([
      ['no CSRF field', { cookies: `csrf=${CSRF}`, form: { name: 'x' } }],
      ['no CSRF cookie', { form: { csrf: CSRF } }],
      ['a field that is not its cookie', { cookies: `csrf=${CSRF}`, form: { csrf: `${CSRF.slice(1)}d` } }],
      ['a session, but the wrong field', { cookies: `csrf=${CSRF}; session=user.${'s'.repeat(43)}`, form: { csrf: 'x' } }],
    ])('is refused with 403 before any read, and the page does not run: %s', async (_, options) => {
      // Act
      const reply = await handler(request('POST', '/account/apps/x/revoke', options), context());

      // Assess
      expect(reply.statusCode).toBe(403);
      expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(requests.operations).toEqual([]);
      expect(page).not.toHaveBeenCalled();
    });

    it('that is not form-encoded is refused (400) before the CSRF check', async () => {
      // Act
      const reply = await handler(request('POST', '/account/apps/x/revoke', { cookies: `csrf=${CSRF}`, form: { csrf: CSRF }, contentType: 'text/plain' }), context());

      // Assess
      expect(reply.statusCode).toBe(400);
      expect(page).not.toHaveBeenCalled();
    });
  });

  describe('a page that needs a signed-in user, without a session', () => {
    it('from a GET: 302 to the login page, to come back to `loginReturn`', async () => {
      // Prepare
      const page = vi.fn(async () => done);
      const handler = pageHandler({ session: 'required', loginReturn: '/developer' }, page);

      // Act
      const reply = await handler(request('GET', '/developer'), context());

      // Assess
      expect(reply).toMatchObject({ statusCode: 302, headers: { location: '/login?return_to=%2Fdeveloper' } });
      expect(page).not.toHaveBeenCalled();
      expect(requests.operations).toEqual([]);
    });

    it('from a form (POST), after the CSRF check: 303, to come back to the path `loginReturn` makes of the request', async () => {
      // Prepare
      const page = vi.fn(async () => done);
      const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: ({ event }) => `${event.rawPath}?again` }, page);

      // Act
      const reply = await handler(request('POST', '/developer/apps/x', { cookies: `csrf=${CSRF}`, form: { csrf: CSRF } }), context());

      // Assess
      expect(reply).toMatchObject({ statusCode: 303, headers: { location: `/login?return_to=${encodeURIComponent('/developer/apps/x?again')}` } });
      expect(page).not.toHaveBeenCalled();
    });

    it('logs the redirect as the request\'s one line, as it logs a page', async () => {
      // Prepare
      const info = vi.spyOn(logger, 'info');
      const handler = pageHandler({ session: 'required', loginReturn: '/account' }, async () => done);

      // Act
      await handler(request('GET', '/account'), context());

      // Assess
      expect(info.mock.calls.filter(([message]) => message === 'request')).toEqual([['request', expect.objectContaining({ route: 'GET /account', status: 302 })]]);
      info.mockRestore();
    });
  });

  it('gives a page with an optional session what it read and the viewer, with a new CSRF token for its forms', async () => {
    // Prepare
    const page = vi.fn(async () => done);
    const handler = pageHandler({ form: true, csrf: true, session: 'optional' }, page);

    // Act
    const reply = await handler(request('POST', '/signup', { cookies: `csrf=${CSRF}`, form: { csrf: CSRF, email: 'a@example.com' } }), context());

    // Assess
    expect(reply).toBe(done);
    expect(page).toHaveBeenCalledWith(expect.objectContaining({
      form: { csrf: CSRF, email: 'a@example.com' }, signedIn: undefined, client: undefined, viewer: { email: undefined, csrf: CSRF, cookies: [] },
    }));
  });

  it('gives a page that needs nothing the request alone, and reads nothing', async () => {
    // Prepare
    const page = vi.fn(async () => done);
    const handler = pageHandler({}, page);
    const event = request('GET', '/');

    // Act
    await handler(event, context());

    // Assess
    expect(page).toHaveBeenCalledWith({ event });
    expect(requests.operations).toEqual([]);
  });
});

// The declarations the compiler refuses (tsc checks this file; nothing here runs).
export function refusedDeclarations() {
  // @ts-expect-error a CSRF check needs the form it checks
  pageHandler({ csrf: true }, async () => done);
  // @ts-expect-error a required session says where the login page sends the user back to
  pageHandler({ session: 'required' }, async () => done);
  // @ts-expect-error reads are made with the session
  pageHandler({ reads: { client: () => 'x' } }, async () => done);
  // @ts-expect-error an optional session may have no signed-in user
  pageHandler({ session: 'optional' }, async ({ signedIn }) => ({ ...done, body: signedIn.user.id }));
  // @ts-expect-error a page that declares no form has none
  pageHandler({ session: 'optional' }, async ({ form }) => ({ ...done, body: String(form) }));
  // A required session's user is there.
  pageHandler({ session: 'required', loginReturn: '/' }, async ({ signedIn }) => ({ ...done, body: signedIn.user.id }));
}

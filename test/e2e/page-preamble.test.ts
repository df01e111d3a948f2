import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countRequests } from '../support/count-requests';
import { Browser, formFields, newDeveloperApp } from '../support/oauth-client';
import { useTestService } from '../support/service';

/**
 * What a page does before its own work, as each page declares it (pageHandler): a form's CSRF pair
 * is checked before anything is read, and a page that needs a signed-in user sends a signed-out
 * browser to the login page — 302 from a GET, 303 from a POST — to come back to the page's
 * `return_to` afterwards.
 */
describe('the pages\' preamble', () => {
  const service = useTestService();
  let requests: ReturnType<typeof countRequests>;
  /** An application of another developer's: a real client id, which the webhook forms name in their return path. */
  let clientId: string;
  /** A client id that names no application. */
  const unknownId = randomUUID();

  beforeAll(async () => {
    // The auth handlers' own client: imported after the service set the environment they read.
    const { doc } = await import('#shared/runtime');
    requests = countRequests(doc);
    ({ clientId } = await newDeveloperApp(service, 'Preamble app'));
  });
  afterAll(() => requests?.detach());
  beforeEach(() => requests.reset());

  /** A signed-out browser with a good CSRF pair (the login page's): its forms pass the CSRF check. */
  async function signedOut(): Promise<{ b: Browser; csrf: string }> {
    const b = new Browser(service.authUrl);
    const { csrf } = formFields((await b.get('/login')).text, '/login');
    return { b, csrf: csrf! };
  }

  const app = (id: string) => `/developer/apps/${id}`;
  const login = (returnTo: string) => `/login?return_to=${encodeURIComponent(returnTo)}`;

  describe('a page that needs a signed-in user, signed out', () => {
    const GETS = (): [string, string][] => [
      ['/account', '/account'],
      ['/developer', '/developer'],
      [app(clientId), app(clientId)],
      [`${app(clientId)}/secret`, `${app(clientId)}/secret`],
      [`${app(clientId)}/delete`, `${app(clientId)}/delete`],
    ];
    const POSTS = (): [string, string][] => [
      ['/confirm-email/resend', '/account'],
      [`/account/apps/${clientId}/revoke`, '/account'],
      ['/developer/apps', '/developer'],
      [app(clientId), app(clientId)],
      [`${app(clientId)}/secret`, `${app(clientId)}/secret`],
      [`${app(clientId)}/secret/retire`, '/developer'],
      [`${app(clientId)}/delete`, '/developer'],
      // The webhook forms come back to the application's page when there is one, else to the console.
      ...['webhook', 'webhook/secret', 'webhook/delete', 'webhook/test', `webhook/deliveries/msg_000000000_${'0'.repeat(20)}`].flatMap(
        (action): [string, string][] => [[`${app(clientId)}/${action}`, app(clientId)], [`${app(unknownId)}/${action}`, '/developer']],
      ),
    ];

    it('GET: 302 to the login page, to come back to the page', async () => {
      const { b } = await signedOut();
      for (const [path, returnTo] of GETS()) {
        expect(await b.get(path), path).toMatchObject({ status: 302, location: login(returnTo) });
      }
    });

    it('POST: 303 to the login page (after the CSRF check), to come back to the page the form was on', async () => {
      const { b, csrf } = await signedOut();
      for (const [path, returnTo] of POSTS()) {
        expect(await b.postForm(path, { csrf, name: 'x', confirm: 'yes', confirm_name: 'x' }), path).toMatchObject({ status: 303, location: login(returnTo) });
      }
    });

    it('with an ended session: the same redirect, after the one read that found no session', async () => {
      // Prepare: a session cookie that names no live session, and the CSRF token a page gives that cookie
      const { b } = await signedOut();
      b.jar.set('session', `${randomUUID()}.${'A'.repeat(43)}`);
      const { csrf } = formFields((await b.get('/login')).text, '/login');

      // Act
      requests.reset();
      const page = await b.get(app(clientId));
      const reads = [...requests.operations];
      const form = await b.postForm(`${app(clientId)}/webhook`, { csrf: csrf!, webhook_url: 'https://hooks.example/h' });

      // Assess
      expect(page).toMatchObject({ status: 302, location: login(app(clientId)) });
      expect(reads).toEqual(['BatchGetItemCommand']);
      expect(form).toMatchObject({ status: 303, location: login(app(clientId)) });
    });
  });

  describe('a form posted without its CSRF pair', () => {
    const FORMS = () => [
      '/login', '/logout', '/signup', '/confirm-email', '/confirm-email/resend', '/password-reset', '/password-reset/confirm', '/oauth/authorize',
      `/account/apps/${clientId}/revoke`, '/developer/apps', app(clientId), `${app(clientId)}/secret`, `${app(clientId)}/secret/retire`,
      `${app(clientId)}/delete`, `${app(clientId)}/webhook`, `${app(clientId)}/webhook/secret`, `${app(clientId)}/webhook/delete`,
      `${app(clientId)}/webhook/test`, `${app(clientId)}/webhook/deliveries/msg_000000000_${'0'.repeat(20)}`,
    ];

    it('is refused (403) before the page reads anything, signed in or not', async () => {
      const { b: developer } = await newDeveloperApp(service, 'Signed-in app');
      const { b: visitor, csrf } = await signedOut();
      for (const b of [developer, visitor]) {
        for (const path of FORMS()) {
          for (const fields of [{}, { csrf: `${csrf.slice(1)}x` }] as Record<string, string>[]) {
            requests.reset();
            const reply = await b.postForm(path, { ...fields, email: 'x@example.com', password: 'x', token: 'x', client_id: clientId });
            expect(reply.status, path).toBe(403);
            expect(requests.operations, path).toEqual([]);
          }
        }
      }
    });
  });
});

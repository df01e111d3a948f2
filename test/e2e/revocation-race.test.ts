import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '#infra/local/service';
import { DEMO_CLIENT } from '#infra/local/seed';
import { Browser, createAccount, formFields, obtainCode, signIn, type Account } from '../support/oauth-client';
import { startTestService } from '../support/service';

// Revoking an application reads the user's grant families (a Query), then revokes them in one
// transaction on condition that each is still the one it read. A refresh that rotates a family in
// between fails that condition: the revocation reads the family again and still ends it. Here the
// refresh is made to happen exactly in between, over HTTP, by the test's own middleware on the
// handlers' DynamoDB client.
describe('revoking an application while its refresh token rotates', () => {
  let service: LocalService;
  let account: Account;

  beforeAll(async () => {
    service = await startTestService();
    account = await createAccount(service);
  });
  afterAll(async () => {
    await service?.stop();
  });

  const token = (fields: Record<string, string>) => fetch(`${service.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret, ...fields }),
  });

  it('ends the grant, including the token the refresh just issued', async () => {
    const browser = new Browser(service.authUrl);
    expect((await signIn(browser, account)).status).toBe(303);
    const { code, redirectUri } = await obtainCode(browser, {}, account);
    const issued = await (await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri })).json() as { refresh_token: string };

    // The handlers' own client, loaded once the service set the environment it reads.
    const { doc } = await import('#shared/auth/runtime');
    let rotated: string | undefined;
    const name = 'rotate-before-revocation';
    doc.middlewareStack.add((next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand' && rotated === undefined) {
        rotated = '';
        const refreshed = await token({ grant_type: 'refresh_token', refresh_token: issued.refresh_token });
        expect(refreshed.status).toBe(200);
        rotated = ((await refreshed.json()) as { refresh_token: string }).refresh_token;
      }
      return next(args);
    }, { step: 'initialize', name });
    try {
      const account_ = await browser.get('/account');
      const revoke = await browser.postForm(`/account/apps/${DEMO_CLIENT.clientId}/revoke`, formFields(account_.text, `/account/apps/${DEMO_CLIENT.clientId}/revoke`));
      expect(revoke.status).toBe(303);
    } finally {
      doc.middlewareStack.remove(name);
    }

    expect(rotated).toBeTruthy();
    for (const refreshToken of [issued.refresh_token, rotated!]) {
      const after = await token({ grant_type: 'refresh_token', refresh_token: refreshToken });
      expect(after.status).toBe(400);
      expect(await after.json()).toMatchObject({ error: 'invalid_grant' });
    }
  });
});

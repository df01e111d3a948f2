import { describe, expect, it } from 'vitest';
import { DEMO_CLIENT } from '#local/seed';
import { randomUUID } from 'node:crypto';
import { hashSecret, randomToken } from '#shared/secrets';
import { createClientRepo } from '#shared/data/client-repo';
import { createGrantRepo } from '#shared/data/grant-repo';
import { formatTimestamp } from '#shared/domain/time';
import { Browser, createAccount, formFields, obtainCode, signIn, type Account, type Reply } from '../support/oauth-client';

interface App {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}
import { useTable, useTestService } from '../support/service';

// Revoking an application reads the user's grant families (a Query), then revokes them in one
// transaction on condition that each is still the one it read. A refresh that rotates a family in
// between fails that condition: the revocation reads the family again and still ends it. Here the
// refresh is made to happen exactly in between, over HTTP, by the test's own middleware on the
// handlers' DynamoDB client.
describe('ending an application\'s grant while its refresh token rotates', () => {
  const service = useTestService();
  const { doc: testDoc } = useTable(service);

  const token = (app: App, fields: Record<string, string>) => fetch(`${service.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, ...fields }),
  });

  /**
   * A signed-in user holding a refresh token of `app`, and `end`, which ends the grant while a
   * refresh of that token happens exactly between the function's Query and its transaction.
   */
  async function raceEnd(app: App, account: Account, browser: Browser, end: () => Promise<Reply>, refreshStatus = 200) {
    const { code, redirectUri } = await obtainCode(browser, { client_id: app.clientId, redirect_uri: app.redirectUri }, account);
    const issued = await (await token(app, { grant_type: 'authorization_code', code, redirect_uri: redirectUri })).json() as { refresh_token: string };

    // The handlers' own client, loaded once the service set the environment it reads.
    const { doc } = await import('#shared/runtime');
    let rotated: string | undefined;
    const name = 'rotate-before-revocation';
    doc.middlewareStack.add((next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand' && rotated === undefined) {
        rotated = '';
        const refreshed = await token(app, { grant_type: 'refresh_token', refresh_token: issued.refresh_token });
        expect(refreshed.status).toBe(refreshStatus);
        rotated = ((await refreshed.json()) as { refresh_token?: string }).refresh_token ?? 'refused';
      }
      return next(args);
    }, { step: 'initialize', name });
    try {
      expect((await end()).status).toBe(303);
    } finally {
      doc.middlewareStack.remove(name);
    }
    expect(rotated).toBeTruthy();
    return [issued.refresh_token, rotated!];
  }

  // The account page deletes the consent first: a refresh between its Query and its transaction
  // fails its check of the grant generation, and revokes its family itself.
  it('revoking it on the account page ends the grant: a refresh right before the transaction is refused, and no token works after', async () => {
    const account = await createAccount(service);
    const browser = new Browser(service.authUrl);
    expect((await signIn(browser, account)).status).toBe(303);
    const app = { clientId: DEMO_CLIENT.clientId, clientSecret: DEMO_CLIENT.clientSecret, redirectUri: DEMO_CLIENT.redirectUris[0] };
    const path = `/account/apps/${app.clientId}/revoke`;
    const [issued] = await raceEnd(app, account, browser, async () => browser.postForm(path, formFields((await browser.get('/account')).text, path)), 400);
    for (const refreshToken of [issued!]) {
      const after = await token(app, { grant_type: 'refresh_token', refresh_token: refreshToken });
      expect(after.status).toBe(400);
      expect(await after.json()).toMatchObject({ error: 'invalid_grant' });
    }
  });

  it('deleting it in the developer console ends the grant, including the token the refresh just issued', async () => {
    const developer = await createAccount(service);
    const browser = new Browser(service.authUrl);
    expect((await signIn(browser, developer)).status).toBe(303);
    const app = { clientId: randomUUID(), clientSecret: randomToken(), redirectUri: 'https://race.example/callback' };
    const clients = createClientRepo({ doc: testDoc, table: service.tableName });
    await clients.createClient({
      clientId: app.clientId, secretHash: hashSecret(app.clientSecret), name: 'Race', description: 'Deleted while refreshing.',
      website: 'https://race.example', redirectUris: [app.redirectUri], developerId: developer.user.id, developerName: 'Race Developer',
      createdAt: formatTimestamp(new Date()),
    });
    const path = `/developer/apps/${app.clientId}/delete`;
    const refreshTokens = await raceEnd(app, developer, browser, async () =>
      browser.postForm(path, { ...formFields((await browser.get(path)).text, path), confirm_name: 'Race' }));
    expect(await clients.getClient(app.clientId)).toBeUndefined();
    const { families } = await createGrantRepo({ doc: testDoc, table: service.tableName }).grantsOf(app.clientId);
    expect(families).toEqual([]);
    for (const refreshToken of refreshTokens) {
      expect((await token(app, { grant_type: 'refresh_token', refresh_token: refreshToken })).status).toBe(401);
    }
  });
});

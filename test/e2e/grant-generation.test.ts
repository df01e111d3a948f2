import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEMO_CLIENT } from '#local/seed';
import { grantTokenNames } from '#shared/oauth/grant-tokens';
import { hashSecret, randomToken } from '#shared/secrets';
import { formatTimestamp } from '#shared/domain/time';
import {
  authorizationParams, authorize, authorizePath, Browser, createAccount, formFields, obtainCode, signIn, type Account, type Reply,
} from '../support/oauth-client';
import { useTable, useTestService } from '../support/service';

interface App {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

const DEMO: App = { clientId: DEMO_CLIENT.clientId, clientSecret: DEMO_CLIENT.clientSecret, redirectUri: DEMO_CLIENT.redirectUris[0] };
const ROUNDS = 20;

/**
 * After a user revokes an application (account page) or its developer deletes it, no code or token
 * of that grant works, whatever the interleaving: each code, family and refresh
 * token records its consent's grant generation, and the exchange and each rotation are conditional
 * on it. Over HTTP against the local service, with the requests raced (Promise.all) or held at an
 * exact point by middleware on the handlers' own DynamoDB client.
 */
describe('revoking or deleting an application ends its outstanding codes and tokens', () => {
  const service = useTestService();
  const { grants, clients } = useTable(service).repos;

  const token = (app: App, fields: Record<string, string>) => fetch(`${service.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, ...fields }),
  });
  const exchange = (app: App, code: string) => token(app, { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri });
  const refresh = (app: App, refreshToken: string) => token(app, { grant_type: 'refresh_token', refresh_token: refreshToken });

  async function signedIn(): Promise<{ browser: Browser; account: Account & { user: { id: string } } }> {
    const account = await createAccount(service);
    const browser = new Browser(service.authUrl);
    expect((await signIn(browser, account)).status).toBe(303);
    return { browser, account };
  }

  /** The account page's revocation of `app`, as the browser posts it. */
  async function revoke(browser: Browser, app: App): Promise<Reply> {
    const path = `/account/apps/${app.clientId}/revoke`;
    return browser.postForm(path, formFields((await browser.get('/account')).text, path));
  }

  /** An application of `developer`, registered directly in the table. */
  async function developerApp(developerId: string): Promise<App & { name: string }> {
    const app = { clientId: randomUUID(), clientSecret: randomToken(), redirectUri: 'https://generation.example/callback', name: `Gen ${randomUUID().slice(0, 8)}` };
    await clients.createClient({
      clientId: app.clientId, secretHash: hashSecret(app.clientSecret), name: app.name, description: 'Deleted in a race.',
      website: 'https://generation.example', redirectUris: [app.redirectUri], developerId, developerName: 'Gen Developer',
      createdAt: formatTimestamp(new Date()),
    });
    return app;
  }

  async function deleteApp(browser: Browser, app: App & { name: string }): Promise<Reply> {
    const path = `/developer/apps/${app.clientId}/delete`;
    return browser.postForm(path, { ...formFields((await browser.get(path)).text, path), confirm_name: app.name });
  }

  /** The user's active token families of the application. */
  const activeFamilies = async (clientId: string, userId: string) => (await grants.grantsOf(clientId, userId)).families;

  /**
   * Runs a code exchange (`call`) with its write, the UpdateItem that makes its code a family, held on
   * the handlers' client until `meanwhile` has finished: the exchange read everything before, and
   * writes only after.
   */
  async function holdingExchangeWrite<T>(call: () => Promise<T>, meanwhile: () => Promise<unknown>): Promise<T> {
    const { doc } = await import('#shared/runtime');
    const name = `hold-${randomUUID()}`;
    let armed = true;
    doc.middlewareStack.add((next, context) => async (args) => {
      if (armed && context.commandName === 'UpdateItemCommand') {
        armed = false;
        await meanwhile();
      }
      return next(args);
    }, { step: 'initialize', name });
    try {
      return await call();
    } finally {
      doc.middlewareStack.remove(name);
      expect(armed).toBe(false);
    }
  }

  it('a code issued before the user revoked the application is refused afterwards, and nothing is written', async () => {
    // Prepare
    const { browser, account } = await signedIn();
    const { code } = await obtainCode(browser, { client_id: DEMO.clientId, redirect_uri: DEMO.redirectUri }, account);
    expect((await revoke(browser, DEMO)).status).toBe(303);

    // Act
    const after = await exchange(DEMO, code);

    // Assess
    expect(after.status).toBe(400);
    expect(await after.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await activeFamilies(DEMO.clientId, account.user.id)).toEqual([]);
    // The revocation found the code pending and ended it: it was never exchanged.
    const item = await grants.getFamily(grantTokenNames(code)!.familyId);
    expect(item).toMatchObject({ status: 'revoked', revokedReason: 'user_revoked' });
    expect(item).not.toHaveProperty('activeTokenHash');
  });

  it('a code issued before the user revoked and again authorized the application is refused: the new consent has another generation', async () => {
    // Prepare
    const { browser, account } = await signedIn();
    const { code } = await obtainCode(browser, { client_id: DEMO.clientId, redirect_uri: DEMO.redirectUri }, account);
    expect((await revoke(browser, DEMO)).status).toBe(303);
    const { code: fresh } = await obtainCode(browser, { client_id: DEMO.clientId, redirect_uri: DEMO.redirectUri }, account);

    // Act
    const old = await exchange(DEMO, code);

    // Assess
    expect(old.status).toBe(400);
    expect((await exchange(DEMO, fresh)).status).toBe(200);
  });

  it('an exchange that read its code before the user revoked, and writes after the revocation returned, is refused', async () => {
    // Prepare
    const { browser, account } = await signedIn();
    const { code } = await obtainCode(browser, { client_id: DEMO.clientId, redirect_uri: DEMO.redirectUri }, account);

    // Act
    const held = await holdingExchangeWrite(() => exchange(DEMO, code), async () => expect((await revoke(browser, DEMO)).status).toBe(303));

    // Assess
    expect(held.status).toBe(400);
    expect(await held.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await activeFamilies(DEMO.clientId, account.user.id)).toEqual([]);
  });

  it('an exchange that read its code before the developer deleted the application, and writes after the deletion returned, is refused', async () => {
    // Prepare
    const { browser: console, account: developer } = await signedIn();
    const app = await developerApp(developer.user.id);
    const { browser, account } = await signedIn();
    const { code } = await obtainCode(browser, { client_id: app.clientId, redirect_uri: app.redirectUri }, account);

    // Act
    const held = await holdingExchangeWrite(() => exchange(app, code), async () => expect((await deleteApp(console, app)).status).toBe(303));

    // Assess
    expect(held.status).toBe(400);
    expect(await held.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await clients.getClient(app.clientId)).toBeUndefined();
    expect(await activeFamilies(app.clientId, account.user.id)).toEqual([]);
  });

  it(`${ROUNDS} rounds of a code exchange racing the revocation: afterwards no code or refresh token of the grant works`, async () => {
    const { browser, account } = await signedIn();
    const outcomes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Prepare
      const { code } = await obtainCode(browser, { client_id: DEMO.clientId, redirect_uri: DEMO.redirectUri }, account);

      // Act
      const [exchanged, revoked] = await Promise.all([exchange(DEMO, code), revoke(browser, DEMO)]);

      // Assess
      expect(revoked.status).toBe(303);
      outcomes.push(exchanged.status);
      if (exchanged.status === 200) {
        const { refresh_token: refreshToken } = (await exchanged.json()) as { refresh_token: string };
        expect((await refresh(DEMO, refreshToken)).status, `round ${round}: refresh after the revocation`).toBe(400);
      } else {
        expect(exchanged.status).toBe(400);
      }
      expect((await exchange(DEMO, code)).status, `round ${round}: the code again`).toBe(400);
      expect(await activeFamilies(DEMO.clientId, account.user.id), `round ${round}: active families`).toEqual([]);
    }
    expect(outcomes).toHaveLength(ROUNDS);
  });

  it(`${ROUNDS} rounds of an "allow" racing the revocation: a code that works comes with a consent that stands, and a revoked scope never comes back`, async () => {
    const { browser, account } = await signedIn();
    for (let round = 0; round < ROUNDS; round++) {
      // Prepare: the user granted read_device; the consent page now asks for read_user too
      await authorize(browser, authorizationParams({ scope: 'read_device' }), { account });
      const page = await browser.get(authorizePath(authorizationParams({ scope: 'read_user' })));
      expect(page.status).toBe(200);
      const fields = { ...formFields(page.text, '/oauth/authorize'), decision: 'allow' };

      // Act
      const [allowed, revoked] = await Promise.all([browser.postForm('/oauth/authorize', fields), revoke(browser, DEMO)]);

      // Assess
      expect(revoked.status).toBe(303);
      expect(allowed.status).toBe(303);
      const code = new URL(allowed.location!, service.authUrl).searchParams.get('code');
      const consent = await grants.getConsent(account.user.id, DEMO.clientId);
      // An allow that read the consent before the revocation may not write it back after it.
      if (consent) expect(consent.scopes, `round ${round}: the consent left`).toEqual(['read_user']);
      if (code) {
        const exchanged = await exchange(DEMO, code);
        expect(exchanged.status, `round ${round}: the code's exchange, with ${consent ? 'a' : 'no'} consent left`).toBe(consent ? 200 : 400);
      }
      if (!consent) expect(await activeFamilies(DEMO.clientId, account.user.id), `round ${round}: active families`).toEqual([]);
      // Start the next round from no grant.
      if (consent) expect((await revoke(browser, DEMO)).status).toBe(303);
    }
  });
});

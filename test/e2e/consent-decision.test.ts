import { describe, expect, it } from 'vitest';
import { DEMO_CLIENT } from '#local/seed';
import { newAuthorizationCode } from '#shared/oauth/grant-tokens';
import { hashSecret, randomToken } from '#shared/secrets';
import { epochSeconds } from '#shared/domain/time';
import { type Account, authorizationParams, authorizePath, Browser, CODE_SHAPE, createAccount, formFields, type Reply, signIn } from '../support/oauth-client';
import { useTable, useTestService } from '../support/service';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/;
const REDIRECT_URI = DEMO_CLIENT.redirectUris[0];

describe('consent decision (POST /oauth/authorize)', () => {
  const service = useTestService();
  const { grants } = useTable(service).repos;

  async function signedIn(): Promise<{ b: Browser; account: Account }> {
    const account = await createAccount(service);
    const b = new Browser(service.authUrl);
    expect((await signIn(b, account)).status).toBe(303);
    return { b, account };
  }

  /** Shows the consent page for `scope` and answers it; returns the page and the answer. */
  async function decide(b: Browser, scope: string, decision: 'allow' | 'deny'): Promise<{ page: Reply; answer: Reply }> {
    const page = await b.get(authorizePath(authorizationParams({ scope })));
    expect(page.status).toBe(200);
    const answer = await b.postForm('/oauth/authorize', { ...formFields(page.text, '/oauth/authorize'), decision });
    return { page, answer };
  }

  const codeOf = (reply: Reply) => new URL(reply.location ?? 'about:blank').searchParams.get('code');

  async function exchange(code: string) {
    const response = await fetch(`${service.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret,
      }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it('allow records the consent and issues a code that exchanges at /oauth/token', async () => {
    // Prepare
    const { b, account } = await signedIn();

    // Act
    const { answer } = await decide(b, 'read_user', 'allow');
    const code = codeOf(answer);
    const consent = await grants.getConsent(account.user.id, DEMO_CLIENT.clientId);
    const tokens = await exchange(code ?? '');

    // Assess
    expect(answer.status).toBe(303);
    expect(answer.location!.startsWith(`${REDIRECT_URI}?`)).toBe(true);
    expect(consent).toEqual({
      userId: account.user.id, clientId: DEMO_CLIENT.clientId, scopes: ['read_user'], grantedAt: expect.stringMatching(TIMESTAMP),
      grantGeneration: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', scope: 'read_user' });
  });

  it('a later allow for new scopes merges them into the consent; its code carries only the scopes asked for', async () => {
    // Prepare
    const { b, account } = await signedIn();
    await decide(b, 'read_user', 'allow');

    // Act
    const { answer } = await decide(b, 'read_device write_device', 'allow');
    const consent = await grants.getConsent(account.user.id, DEMO_CLIENT.clientId);
    const tokens = await exchange(codeOf(answer) ?? '');
    const again = await b.get(authorizePath(authorizationParams({ scope: 'read_user write_device' })));

    // Assess
    expect(answer.status).toBe(303);
    expect(consent!.scopes).toEqual(['read_user', 'read_device', 'write_device']);
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('read_device write_device');
    // Every scope is now remembered: no consent page, a code straight away.
    expect(again.status).toBe(302);
    expect(codeOf(again)).toMatch(CODE_SHAPE);
  });

  it('deny records no consent and issues no code', async () => {
    // Prepare
    const { b, account } = await signedIn();

    // Act
    const { answer } = await decide(b, 'read_user', 'deny');

    // Assess
    expect(answer.status).toBe(303);
    const location = new URL(answer.location!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.has('code')).toBe(false);
    expect(await grants.getConsent(account.user.id, DEMO_CLIENT.clientId)).toBeUndefined();
  });

  it('saveConsentWithCode writes neither the consent nor the code when the code cannot be stored', async () => {
    // Prepare: a code already stored in the family item the transaction would use
    const account = await createAccount(service);
    const { stored: code } = newAuthorizationCode({
      clientId: DEMO_CLIENT.clientId, userId: account.user.id, redirectUri: REDIRECT_URI, scopes: ['read_user'], expiresAt: epochSeconds(new Date()) + 60,
    });
    await grants.createCode(code);
    const consent = { userId: account.user.id, clientId: DEMO_CLIENT.clientId, scopes: ['read_device'], grantedAt: '2026-03-04T05:06:07.890' };

    // Act
    const saving = grants.saveConsentWithCode(consent, undefined, { ...code, scopes: ['read_device'], codeHash: hashSecret(randomToken()) });

    // Assess
    await expect(saving).rejects.toMatchObject({ name: 'TransactionCanceledException' });
    expect(await grants.getConsent(account.user.id, DEMO_CLIENT.clientId)).toBeUndefined();
    expect(await grants.getFamily(code.familyId)).toEqual(code);
  });
});

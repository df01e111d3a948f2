import { randomUUID } from 'node:crypto';
import { base32 } from '@otplib/plugin-base32-scure';
import { crypto } from '@otplib/plugin-crypto-node';
import { generateSync } from '@otplib/totp';
import { describe, expect, it, vi } from 'vitest';
import { readOutbox } from '#shared/email/outbox-mailer';
import { logger } from '#shared/log';
import { authorizationParams, authorize, Browser, formFields, signIn } from '../support/oauth-client';
import { captureOutput } from '../support/capture-output';
import { useTestService } from '../support/service';

// Before any import: the one logger reads its level when its module loads.
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
});

describe('logs of a full account and OAuth flow', () => {
  // Everything written to stdout and stderr from here on is kept, and not printed.
  const captured = captureOutput(['stdout', 'stderr']);
  /** Every secret the flow handled, by name. */
  const secrets: Record<string, string> = {};
  /** The short ones (authenticator codes of 6 digits, recovery codes of 19 characters), checked apart. */
  const shortSecrets: Record<string, string> = {};

  // After the capture's hooks: it starts once the output is kept, and stops before it is printed again.
  const service = useTestService();

  /** Runs sign-up, confirmation, login, app registration, consent, code exchange, API call, refresh, password reset, revocation, export and deletion. */
  async function runFullFlow() {
    const auth = new Browser(service.authUrl);
    const email = `logs-${randomUUID()}@example.com`;
    const mailTo = async (subject: string) => (await readOutbox(service.outboxDir)).find((m) => m.to === email && m.subject === subject)!.text;
    const tokenIn = (text: string, path: string) => new RegExp(`${path}\\?token=([A-Za-z0-9_-]+)`).exec(text)![1]!;
    const post = async (pagePath: string, action: string, fields: Record<string, string> = {}, unchecked: string[] = []) => {
      const form = await auth.get(pagePath);
      const sent = Object.fromEntries(Object.entries(formFields(form.text, action)).filter(([name]) => !unchecked.includes(name)));
      return auth.postForm(action, { ...sent, ...fields });
    };
    const tokenRequest = async (params: Record<string, string>) => {
      const response = await fetch(`${service.authUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...params, client_id: secrets.clientId!, client_secret: secrets.clientSecret! }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, string> };
    };

    secrets.password = 'a very private passphrase for the logs';
    expect((await post('/signup', '/signup', { firstname: 'Log', lastname: 'Reader', email, password: secrets.password })).status).toBe(303);
    secrets.confirmToken = tokenIn(await mailTo('Confirm your e-mail address'), '/confirm-email');
    expect((await post(`/confirm-email?token=${secrets.confirmToken}`, '/confirm-email')).status).toBe(303);
    secrets.csrf = auth.jar.get('csrf')!;

    secrets.wrongPassword = 'a wrong passphrase typed by mistake';
    expect((await signIn(auth, { user: { id: '', email }, password: secrets.wrongPassword })).status).toBe(401);
    expect((await signIn(auth, { user: { id: '', email }, password: secrets.password })).status).toBe(303);
    secrets.session = auth.jar.get('session')!;

    const redirectUri = 'https://log-reader.example/callback';
    const registered = await post('/developer', '/developer/apps', {
      name: 'Log Reader', description: '', website: 'https://log-reader.example', redirect_uris: redirectUri,
    });
    expect(registered.status).toBe(303);
    secrets.revealKey = auth.jar.get('reveal')!;
    const shown = await auth.get(registered.location!);
    secrets.clientId = /id="client-id">([^<]+)</.exec(shown.text)![1]!;
    secrets.clientSecret = /id="client-secret">([^<]+)</.exec(shown.text)![1]!;

    const callback = await authorize(auth, authorizationParams({ client_id: secrets.clientId, redirect_uri: redirectUri, scope: 'read_user read_device' }));
    secrets.code = callback.searchParams.get('code')!;
    const exchange = await tokenRequest({ grant_type: 'authorization_code', code: secrets.code, redirect_uri: redirectUri });
    expect(exchange.status).toBe(200);
    secrets.accessToken = exchange.body.access_token!;
    secrets.refreshToken = exchange.body.refresh_token!;
    // A replay of the code is refused (and logged as a failed request).
    expect((await tokenRequest({ grant_type: 'authorization_code', code: secrets.code, redirect_uri: redirectUri })).status).toBe(400);

    // The replay revoked that grant: authorize again (consent is remembered, so no page this time).
    const again = await authorize(auth, authorizationParams({ client_id: secrets.clientId, redirect_uri: redirectUri, scope: 'read_user' }));
    const exchange2 = await tokenRequest({ grant_type: 'authorization_code', code: again.searchParams.get('code')!, redirect_uri: redirectUri });
    expect(exchange2.status).toBe(200);
    const user = await fetch(`${service.apiUrl}/user`, { headers: { authorization: `Bearer ${exchange2.body.access_token}` } });
    expect(user.status).toBe(200);
    expect(await user.json()).toMatchObject({ email, email_confirmed: true });

    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: exchange2.body.refresh_token! });
    expect(refreshed.status).toBe(200);
    secrets.refreshedAccessToken = refreshed.body.access_token!;
    secrets.refreshedRefreshToken = refreshed.body.refresh_token!;
    secrets.secondAccessToken = exchange2.body.access_token!;
    secrets.secondRefreshToken = exchange2.body.refresh_token!;

    expect((await post('/password-reset', '/password-reset', { email })).status).toBe(303);
    secrets.resetToken = tokenIn(await mailTo('Reset your password'), '/password-reset/confirm');
    secrets.newPassword = 'another private passphrase, the new one';
    // The box "also sign out every connected application" left unchecked: the application is revoked below.
    const reset = await post(`/password-reset/confirm?token=${secrets.resetToken}`, '/password-reset/confirm', { password: secrets.newPassword }, ['sign_out_apps']);
    expect(reset).toMatchObject({ status: 303, location: '/password-reset/confirm?done=password-changed' });
    // The reset signed the account out everywhere: sign in again with the new password.
    expect((await signIn(auth, { user: { id: '', email }, password: secrets.newPassword })).status).toBe(303);
    secrets.secondSession = auth.jar.get('session')!;

    const revoked = await post('/account', `/account/apps/${secrets.clientId}/revoke`);
    expect(revoked.status).toBe(303);
    const afterRevoke = await tokenRequest({ grant_type: 'refresh_token', refresh_token: secrets.refreshedRefreshToken });
    expect(afterRevoke).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // An access token is self-contained: it works until it expires, revoked grant or not.
    const apiWithRefreshedToken = await fetch(`${service.apiUrl}/user`, { headers: { authorization: `Bearer ${secrets.refreshedAccessToken}` } });
    expect(apiWithRefreshedToken.status).toBe(200);

    expect((await post('/account', '/logout')).status).toBe(303);
    expect((await signIn(auth, { user: { id: '', email }, password: secrets.newPassword })).status).toBe(303);
    secrets.secondSession = auth.jar.get('session')!;

    const appPath = `/developer/apps/${secrets.clientId}`;
    const rotated = await post(appPath, `${appPath}/secret`, { confirm: 'yes' });
    expect(rotated.status).toBe(303);
    secrets.rotationRevealKey = auth.jar.get('reveal')!;
    secrets.rotatedSecret = /id="client-secret">([^<]+)</.exec((await auth.get(rotated.location!)).text)![1]!;
    expect((await post(appPath, `${appPath}/secret/retire`)).status).toBe(303);

    // Two-step sign-in: the authenticator app's key and codes, the recovery codes, the pending sign-in.
    const t = Date.now();
    vi.setSystemTime(t);
    try {
      const codeAt = (at: number) => generateSync({ secret: secrets.totpSecret!, crypto, base32, epoch: Math.floor(at / 1000) });
      const setup = await auth.get('/account/security/totp');
      secrets.totpSecret = /id="totp-secret">([^<]+)</.exec(setup.text)![1]!.replace(/\s/g, '');
      shortSecrets.enrolmentCode = codeAt(t);
      const enrolled = await auth.postForm('/account/security/totp', { ...formFields(setup.text, '/account/security/totp'), code: shortSecrets.enrolmentCode });
      expect(enrolled.status).toBe(303);
      secrets.recoveryKey = auth.jar.get('recovery_key')!;
      const codes = [...(await auth.get(enrolled.location!)).text.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!);
      expect(codes).toHaveLength(10);
      shortSecrets.recoveryCode = codes[0]!;
      expect((await post('/account', '/logout')).status).toBe(303);
      vi.setSystemTime(t + 30_000);
      const password = await signIn(auth, { user: { id: '', email }, password: secrets.newPassword });
      expect(password.status).toBe(303);
      secrets.pendingSignIn = auth.jar.get('pending_sign_in')!;
      shortSecrets.wrongCode = String((Number(codeAt(t + 30_000)) + 1) % 1_000_000).padStart(6, '0');
      expect((await post(password.location!, '/login/second-factor', { code: shortSecrets.wrongCode })).status).toBe(401);
      shortSecrets.signInCode = codeAt(t + 30_000);
      expect((await post(password.location!, '/login/second-factor', { code: shortSecrets.signInCode })).status).toBe(303);
      secrets.thirdSession = auth.jar.get('session')!;
      expect((await post('/account', '/logout')).status).toBe(303);
      const again = await signIn(auth, { user: { id: '', email }, password: secrets.newPassword });
      expect((await post(again.location!, '/login/second-factor', { code: shortSecrets.recoveryCode })).status).toBe(303);

      // Passkeys: the challenges of a sign-in's and a registration's options, and a refused answer carrying one.
      // Signed in: the forms' token is the session's (shared/http/csrf.ts), as the security page prints it.
      const csrf = { csrf: formFields((await auth.get('/account/security')).text, '/account/security/passkeys').csrf! };
      const signInOptions = await auth.postForm('/login/passkey/options', csrf);
      expect(signInOptions.status).toBe(200);
      secrets.signInChallenge = (JSON.parse(signInOptions.text) as { challenge: string }).challenge;
      const registration = await auth.postForm('/account/security/passkeys/options', csrf);
      expect(registration.status).toBe(200);
      secrets.registrationChallenge = (JSON.parse(registration.text) as { challenge: string }).challenge;
      const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: secrets.signInChallenge, origin: service.authUrl })).toString('base64url');
      const answer = JSON.stringify({ id: 'Y3JlZA', rawId: 'Y3JlZA', type: 'public-key', response: { clientDataJSON, authenticatorData: 'ZGF0YQ', signature: 'c2ln', userHandle: 'dXNlcg' } });
      expect((await auth.postForm('/login/passkey', { ...csrf, return_to: '/account', response: answer })).status).toBe(401);
    } finally {
      vi.useRealTimers();
    }
    // The account's data: its export, then its deletion, a wrong password first.
    expect((await post('/account', '/account/export')).status).toBe(200);
    secrets.wrongDeletePassword = 'not the passphrase, typed to delete the account';
    expect((await post('/account/delete', '/account/delete', { password: secrets.wrongDeletePassword })).status).toBe(401);
    expect((await post('/account/delete', '/account/delete', { password: secrets.newPassword })).status).toBe(303);
  }

  it('never writes a password, client secret, code, token, session, CSRF value or link token, while logging every request', { timeout: 60_000 }, async () => {
    await runFullFlow();
    const output = captured.join('');
    const requests = output.split('\n').filter(Boolean).flatMap((line) => {
      try {
        return [JSON.parse(line) as { level: string; message: string; route?: string; status?: number }];
      } catch {
        return [];
      }
    }).filter((entry) => entry.message === 'request');

    expect(logger.getLevelName()).toBe('DEBUG');
    for (const route of [
      'POST /signup', 'POST /confirm-email', 'POST /login', 'POST /developer/apps', 'GET /oauth/authorize', 'POST /oauth/authorize',
      'POST /oauth/token', 'GET /user', 'POST /password-reset', 'POST /password-reset/confirm', 'POST /account/apps/{client_id}/revoke',
      'POST /logout', 'GET /developer/apps/{client_id}/secret', 'POST /developer/apps/{client_id}/secret',
      'POST /developer/apps/{client_id}/secret/retire', 'GET /account/security/totp', 'POST /account/security/totp',
      'GET /account/security/recovery-codes', 'POST /login/second-factor', 'POST /login/passkey/options', 'POST /account/security/passkeys/options',
      'POST /login/passkey', 'POST /account/export', 'POST /account/delete',
    ]) {
      expect(requests.some((entry) => entry.route === route), `a request line for ${route}`).toBe(true);
    }
    expect(requests.some((entry) => entry.route === 'POST /login' && entry.status === 401)).toBe(true);
    expect(requests.some((entry) => entry.route === 'POST /oauth/token' && entry.status === 400)).toBe(true);

    expect(Object.keys(secrets).sort()).toEqual([
      'accessToken', 'clientId', 'clientSecret', 'code', 'confirmToken', 'csrf', 'newPassword', 'password', 'refreshToken',
      'pendingSignIn', 'recoveryKey', 'refreshedAccessToken', 'registrationChallenge', 'signInChallenge', 'refreshedRefreshToken', 'resetToken', 'revealKey', 'rotatedSecret', 'rotationRevealKey',
      'secondAccessToken', 'secondRefreshToken', 'secondSession', 'session', 'thirdSession', 'totpSecret', 'wrongDeletePassword', 'wrongPassword',
    ].sort());
    expect(Object.keys(shortSecrets).sort()).toEqual(['enrolmentCode', 'recoveryCode', 'signInCode', 'wrongCode']);
    for (const [name, value] of Object.entries(shortSecrets)) {
      // A 6-digit code may occur by chance inside a longer number (a latency, a timestamp): not as a value of its own.
      for (const form of [`"${value}"`, `=${value}`, `:${value}`, value.replace(/-/g, '')]) {
        if (form.length >= 8) expect(output.includes(form), `${name} appears in the logs`).toBe(false);
      }
    }
    const { clientId: _notSecret, ...mustNotAppear } = secrets;
    for (const [name, value] of Object.entries(mustNotAppear)) {
      expect(value.length, name).toBeGreaterThanOrEqual(20);
      expect(output.includes(value), `${name} appears in the logs`).toBe(false);
      // A JWT's signature alone would also let the token be rebuilt from its public parts.
      const signature = value.split('.')[2];
      if (signature) expect(output.includes(signature), `${name}'s signature appears in the logs`).toBe(false);
    }
  });
});

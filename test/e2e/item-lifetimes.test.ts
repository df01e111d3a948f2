import { randomUUID } from 'node:crypto';
import { PutCommand, ScanCommand } from '#shared/data/commands';
import { beforeAll, describe, expect, it } from 'vitest';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { newWebhookId } from '#shared/domain/webhook';
import { newSecretReveal } from '#shared/console/developer';
import { createLocalKeyStore, createLocalSigner } from '#shared/keys/local-signer';
import { hashSecret, randomToken } from '#shared/secrets';
import { grantTokenNames, newAuthorizationCode } from '#shared/oauth/grant-tokens';
import { createTokenService, type TokenService } from '#shared/oauth/token-service';
import { revokeToken } from '#shared/oauth/revocation';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createSigningKeyRepo } from '#shared/data/signing-key-repo';
import type { Client } from '#shared/domain/client';
import { formatTimestamp } from '#shared/domain/time';
import { InvalidGrantError } from '#shared/errors';
import {
  authorizationParams, authorize, Browser, createAccount, formFields, nextLoopbackAddress, signIn, textOf, type Account,
} from '../support/oauth-client';
import { linkToken, mailTo } from '../support/outbox';
import { useTable, useTestService } from '../support/service';
import { putThrottleRecord } from '../support/throttle';
import { rotateSigningKeys } from '#shared/keys/rotation';
import {
  addPasskey, enrolAuthenticatorApp, nextTotpCode, passkeyRegistrationOptions, passkeySignInOptions, secondStep, signInWithPasskey,
} from '../support/two-step';

type Item = Record<string, unknown>;

const MINUTE = 60;
const HOUR = 3600;
const DAY = 24 * HOUR;

/** What an item's lifetime requires: no TTL (it lives until something deletes it), a TTL this long after its write, or that it not exist. */
type Lifetime =
  | { state: string; ttl: 'none' }
  | { state: string; ttl: number }
  /** A TTL at a moment of its own (the end of a fixed window), whenever the item was written in it. */
  | { state: string; expiresAt: number }
  | { state: string; dead: string };

/** Looks an item of the scanned table up by key. */
type Lookup = (pk: string, sk: string) => Item | undefined;

/**
 * The lifetime of every kind of item, as this test states it: written here, not imported from the
 * code, so that the two can disagree. Each kind is recognised by the shape of its key; `lifetime`
 * says, for an item in its state, whether it must carry a TTL (`expiresAt`) and how long after its
 * write, or must carry none, or should not exist at all (a dead item without a TTL).
 */
const KINDS: { kind: string; pk: RegExp; sk: RegExp; lifetime: (item: Item, find: Lookup) => Lifetime }[] = [
  {
    kind: 'user profile', pk: /^USER#[0-9a-f-]{36}$/, sk: /^PROFILE$/,
    lifetime: () => ({ state: 'user', ttl: 'none' }),
  },
  {
    kind: 'e-mail address item', pk: /^EMAIL#[^#\s]+@[^#\s]+$/, sk: /^EMAIL$/,
    lifetime: (item, find) => (find(`USER#${String(item.userId)}`, 'PROFILE')
      ? { state: 'e-mail address', ttl: 'none' }
      : { state: 'e-mail address', dead: 'the address of no account' }),
  },
  {
    kind: 'device', pk: /^USER#[0-9a-f-]{36}$/, sk: /^DEVICE#[0-9a-f-]{36}$/,
    lifetime: () => ({ state: 'device', ttl: 'none' }),
  },
  {
    kind: 'consent', pk: /^USER#[0-9a-f-]{36}$/, sk: /^CONSENT#[^#]+$/,
    lifetime: (item, find) => (find(`CLIENT#${String(item.clientId)}`, 'CLIENT')
      ? { state: 'consent', ttl: 'none' }
      : { state: 'consent', dead: 'a consent to an application that no longer exists' }),
  },
  {
    kind: 'application', pk: /^CLIENT#[^#]+$/, sk: /^CLIENT$/,
    lifetime: () => ({ state: 'application', ttl: 'none' }),
  },
  {
    kind: 'webhook subscription', pk: /^CLIENT#[^#]+$/, sk: /^WEBHOOK$/,
    lifetime: (item, find) => (find(String(item.pk), 'CLIENT')
      ? { state: 'webhook subscription', ttl: 'none' }
      : { state: 'webhook subscription', dead: 'the webhook of an application that no longer exists' }),
  },
  {
    // Kept for the console's list of last deliveries.
    kind: 'webhook delivery', pk: /^DELIVERIES#[^#]+$/, sk: /^\d{4}-\d\d-\d\dT[\d:.]+Z#msg_[0-9a-z]{9}_[0-9a-f]{20}$/,
    lifetime: () => ({ state: 'webhook delivery', ttl: 30 * DAY }),
  },
  {
    // Shown once on the page the registration or rotation redirects to, and deleted by that GET.
    kind: 'new client secret to show once', pk: /^REVEAL#[A-Za-z0-9_-]{43}$/, sk: /^REVEAL$/,
    lifetime: () => ({ state: 'secret to show', ttl: 10 * MINUTE }),
  },
  {
    kind: 'session', pk: /^SESSION#[A-Za-z0-9_-]{43}$/, sk: /^SESSION$/,
    lifetime: () => ({ state: 'session', ttl: 8 * HOUR }),
  },
  {
    kind: 'e-mailed link', pk: /^LINK#[A-Za-z0-9_-]{43}$/, sk: /^LINK$/,
    lifetime: (item) => (item.purpose === 'reset-password'
      ? { state: 'password reset link', ttl: HOUR }
      : { state: 'confirmation link', ttl: DAY }),
  },
  {
    kind: 'signing-key schedule', pk: /^SIGNING#KEYS$/, sk: /^SIGNING#KEYS$/,
    lifetime: () => ({ state: 'signing-key schedule', ttl: 'none' }),
  },
  {
    kind: 'login throttle record', pk: /^THROTTLE#(account-address|account|address)#[^#]+$/, sk: /^THROTTLE$/,
    lifetime: (item) => ({ state: `${String(item.pk).split('#')[1]} throttle record`, ttl: DAY }),
  },
  {
    // A fixed window of the per-address mail limit, named by its start: it dies at the window's end.
    kind: 'mail count', pk: /^MAILLIMIT#[A-Za-z0-9_-]{43}$/, sk: /^WINDOW#\d+$/,
    lifetime: (item) => ({ state: 'mail count', expiresAt: Number(String(item.sk).slice('WINDOW#'.length)) + HOUR }),
  },
  {
    // A browser that signed in (OWASP's "device cookie"), by the hash of its cookie; replaced at its next login.
    kind: 'known browser', pk: /^BROWSER#[A-Za-z0-9_-]{43}$/, sk: /^BROWSER$/,
    lifetime: () => ({ state: 'known browser', ttl: 30 * DAY }),
  },
  {
    kind: 'second-factor throttle record', pk: /^THROTTLE#second-factor#[0-9a-f-]{36}$/, sk: /^THROTTLE$/,
    lifetime: () => ({ state: 'second-factor throttle record', ttl: DAY }),
  },
  {
    // Deleted with the factor, or by the account's deletion.
    kind: 'authenticator app', pk: /^USER#[0-9a-f-]{36}$/, sk: /^FACTOR#TOTP$/,
    lifetime: (item, find) => ofAccount(item, find, { state: 'authenticator app', ttl: 'none' }),
  },
  {
    // The key shown on the setup page, waiting for its first code.
    kind: 'authenticator enrolment', pk: /^USER#[0-9a-f-]{36}$/, sk: /^FACTOR#TOTP#ENROLMENT$/,
    lifetime: () => ({ state: 'authenticator enrolment', ttl: 15 * MINUTE }),
  },
  {
    // The unused codes' hashes, one set; deleted with the authenticator app.
    kind: 'recovery codes', pk: /^USER#[0-9a-f-]{36}$/, sk: /^FACTOR#RECOVERY$/,
    lifetime: (item, find) => ofAccount(item, find, { state: 'recovery codes', ttl: 'none' }),
  },
  {
    // Shown once on the page the enrolment redirects to, and deleted by that GET.
    kind: 'recovery codes to show once', pk: /^USER#[0-9a-f-]{36}$/, sk: /^FACTOR#RECOVERY#REVEAL$/,
    lifetime: () => ({ state: 'recovery codes to show', ttl: 10 * MINUTE }),
  },
  {
    // By the hash of its credential id; removed by its owner, an operator's reset or the account's deletion.
    kind: 'passkey', pk: /^USER#[0-9a-f-]{36}$/, sk: /^FACTOR#PASSKEY#[A-Za-z0-9_-]{43}$/,
    lifetime: (item, find) => ofAccount(item, find, { state: 'passkey', ttl: 'none' }),
  },
  {
    // A credential id registered to one account: it lives exactly as long as that account's passkey.
    kind: 'passkey claim', pk: /^PASSKEYID#[A-Za-z0-9_-]{43}$/, sk: /^PASSKEYID$/,
    lifetime: (item, find) => (find(`USER#${String(item.userId)}`, `FACTOR#PASSKEY#${String(item.pk).slice('PASSKEYID#'.length)}`)
      ? { state: 'passkey claim', ttl: 'none' }
      : { state: 'passkey claim', dead: 'the claim of a passkey that no longer exists' }),
  },
  {
    // Single use: its answer deletes it; one never answered waits out the ceremony's 5 minutes.
    kind: 'WebAuthn challenge', pk: /^CHALLENGE#[A-Za-z0-9_-]{43}$/, sk: /^CHALLENGE$/,
    lifetime: (item) => ({ state: `passkey ${item.purpose === 'register' ? 'registration' : 'sign-in'} challenge`, ttl: 5 * MINUTE }),
  },
  {
    // A right password waiting for its second factor; the second step deletes it.
    kind: 'pending sign-in', pk: /^SIGNIN#[A-Za-z0-9_-]{43}$/, sk: /^SIGNIN$/,
    lifetime: () => ({ state: 'pending sign-in', ttl: 5 * MINUTE }),
  },
  {
    // The device flow's user code (RFC 8628), by the hash of its canonical form: entered and decided,
    // it is deleted; never entered, it waits out the device code's 10 minutes.
    kind: 'device flow user code', pk: /^USERCODE#[A-Za-z0-9_-]{43}$/, sk: /^USERCODE$/,
    lifetime: () => ({ state: 'user code', ttl: 10 * MINUTE }),
  },
  {
    // User codes entered by an account or from an address in a 10-minute window named by its start: it dies at the window's end.
    kind: 'user code entry count', pk: /^USERCODEENTRIES#(account#[0-9a-f-]{36}|address#[0-9a-f.:]+)$/, sk: /^WINDOW#\d+$/,
    lifetime: (item) => ({
      state: `user code entries of an ${String(item.pk).split('#')[1]}`, expiresAt: Number(String(item.sk).slice('WINDOW#'.length)) + 10 * MINUTE,
    }),
  },
  {
    // A code is its family's first state (pending): its exchange makes it the family.
    kind: 'token family', pk: /^FAMILY#[0-9a-f-]{36}$/, sk: /^FAMILY$/,
    lifetime: (item, find) => {
      if (item.status === 'pending') return { state: 'unused code', ttl: 10 * MINUTE };
      // The device flow's first states: waiting for its user code, then decided until the device polls (10 minutes from the start).
      if (item.status === 'device_pending') return { state: 'device authorization waiting', ttl: 10 * MINUTE };
      if (item.status === 'device_denied') return { state: 'device authorization denied', ttl: 10 * MINUTE };
      // A code a revocation ended before its exchange keeps its 10 minutes.
      if (item.status === 'revoked' && item.activeTokenHash === undefined) return { state: 'code revoked unused', ttl: 10 * MINUTE };
      // Its refresh tokens live in it (hashes): no item of their own.
      if (item.status !== 'active') return { state: 'revoked family', ttl: 30 * DAY };
      const state = item.previousTokenHash === undefined ? 'active family' : 'active family, rotated';
      return find(`CLIENT#${String(item.clientId)}`, 'CLIENT')
        ? { state, ttl: 'none' }
        : { state, dead: 'an active family of an application that no longer exists' };
    },
  },
];

/** An item of a user's partition beside the profile: it lives as long as the account (the deletion removes it). */
function ofAccount(item: Item, find: Lookup, lifetime: Lifetime): Lifetime {
  return find(String(item.pk), 'PROFILE') ? lifetime : { state: lifetime.state, dead: 'an item of an account that no longer exists' };
}

const SIGNUP_PASSWORD = 'a quiet lighthouse keeps the harbour';

/**
 * Walks the service's flows over HTTP on DynamoDB Local, then reads back the whole table: every
 * item must be of a known kind and carry exactly the lifetime its kind states. Then: items past
 * their TTL that DynamoDB has not deleted yet (DynamoDB Local never deletes them) count as absent.
 */
describe('item lifetimes', () => {
  const service = useTestService();
  const { doc, repos } = useTable(service);

  const epoch = () => Math.floor(Date.now() / 1000);

  /** GETs `page` and posts its form to `action` with `fields` added and the `unchecked` boxes left out. */
  async function submit(b: Browser, page: string, action: string, fields: Record<string, string> = {}, unchecked: string[] = []) {
    const form = await b.get(page);
    expect(form.status).toBe(200);
    const sent = Object.fromEntries(Object.entries(formFields(form.text, action)).filter(([name]) => !unchecked.includes(name)));
    return b.postForm(action, { ...sent, ...fields });
  }

  async function signUp(email: string) {
    const b = new Browser(service.authUrl);
    const reply = await submit(b, '/signup', '/signup', { firstname: 'Ada', lastname: 'Lovelace', email, password: SIGNUP_PASSWORD, gender: '2' });
    expect(reply).toMatchObject({ status: 303, location: '/signup?done=signed-up' });
    return b;
  }

  interface App {
    clientId: string;
    clientSecret: string;
    name: string;
    redirectUri: string;
  }

  async function registerApp(developer: Browser, fields: Record<string, string> = {}): Promise<App> {
    const redirectUri = `https://app-${randomUUID().slice(0, 8)}.example/callback`;
    const name = `App ${randomUUID().slice(0, 8)}`;
    const posted = await submit(developer, '/developer', '/developer/apps', {
      name, description: 'Lifetimes.', website: 'https://app.example', redirect_uris: redirectUri, ...fields,
    });
    expect(posted.status).toBe(303);
    const reply = await developer.get(posted.location!);
    const clientId = /id="client-id">([^<]+)</.exec(reply.text)?.[1];
    const clientSecret = /id="client-secret">([^<]+)</.exec(reply.text)?.[1];
    if (!clientId || !clientSecret) throw new Error(`no credentials on: ${textOf(reply.text).slice(0, 300)}`);
    return { clientId, clientSecret, name, redirectUri };
  }

  async function tokenEndpoint(path: '/oauth/token' | '/oauth/revoke' | '/oauth/device_authorization', app: App, fields: Record<string, string>) {
    const response = await fetch(`${service.authUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, client_id: app.clientId, client_secret: app.clientSecret }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, string> };
  }

  /** A code of `app` for the user signed in on `b` (consenting if asked). */
  async function codeFor(b: Browser, account: Account, app: App): Promise<string> {
    const callback = await authorize(b, authorizationParams({ client_id: app.clientId, redirect_uri: app.redirectUri, scope: 'read_user' }), { account });
    return callback.searchParams.get('code')!;
  }

  async function exchange(app: App, code: string) {
    return tokenEndpoint('/oauth/token', app, { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri });
  }

  /** A new token family of `app` for the user signed in on `b`: its first refresh token. */
  async function family(b: Browser, account: Account, app: App): Promise<string> {
    const reply = await exchange(app, await codeFor(b, account, app));
    expect(reply.status).toBe(200);
    return reply.body.refresh_token!;
  }

  async function refresh(app: App, refreshToken: string) {
    return tokenEndpoint('/oauth/token', app, { grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  async function scanTable(): Promise<Item[]> {
    const items: Item[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(new ScanCommand({ TableName: service.tableName, ConsistentRead: true, ExclusiveStartKey: startKey }));
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
  }

  it('leaves only items of known kinds, each with the TTL its kind states (or none where it lives on)', async () => {
    // Prepare: walk the flows, from the moment every TTL in the table is counted
    const startedAt = epoch();

    // Sign-up and confirmation; a second sign-up never confirmed.
    const email = `walker-${randomUUID()}@example.com`;
    const signedUp = await signUp(email);
    const confirmation = linkToken(service, (await mailTo(service, email))[0]!.text, '/confirm-email');
    const confirmed = await submit(signedUp, `/confirm-email?token=${confirmation}`, '/confirm-email');
    expect(confirmed).toMatchObject({ status: 303, location: '/confirm-email?done=confirmed' });
    await signUp(`unconfirmed-${randomUUID()}@example.com`);
    const walker: Account = { user: { ...(await repos.users.findUserByEmail(email))!.user }, password: SIGNUP_PASSWORD };

    // Failed logins (on the account and on an unknown address, below the delays), then a successful one.
    const b = new Browser(service.authUrl, { sourceAddress: nextLoopbackAddress() });
    for (const [address, password] of [[email, 'wrong'], [`nobody-${randomUUID()}@example.com`, 'wrong']]) {
      expect((await submit(b, '/login', '/login', { email: address!, password: password! })).status).toBe(401);
    }
    expect((await signIn(b, walker)).status).toBe(303);

    // A developer with three applications.
    const developerAccount = await createAccount(service);
    const developer = new Browser(service.authUrl);
    expect((await signIn(developer, developerAccount)).status).toBe(303);
    const [kept, deleted, revoked] = [await registerApp(developer), await registerApp(developer), await registerApp(developer)];
    // A rotation whose new secret was never shown: the browser did not follow the redirect.
    const rotation = await submit(developer, `/developer/apps/${kept.clientId}`, `/developer/apps/${kept.clientId}/secret`, { confirm: 'yes' });
    expect(rotation.status).toBe(303);

    // The device flow (RFC 8628): a user code the developer enters at /device and denies, and one never entered.
    const tv = await registerApp(developer, { client_type: 'confidential', device_flow: 'on' });
    const deviceAuthorization = async () => {
      const reply = await tokenEndpoint('/oauth/device_authorization', tv, { scope: 'read_device' });
      expect(reply.status).toBe(200);
      return reply.body.user_code!;
    };
    const entered = await deviceAuthorization();
    await deviceAuthorization();
    const consentPage = await submit(developer, '/device', '/device', { user_code: entered });
    expect(consentPage.status).toBe(200);
    expect((await developer.postForm('/device', { ...formFields(consentPage.text, '/device'), decision: 'deny' })).status).toBe(200);

    // Rotation, then reuse of the first token once its successor was used: the family is revoked.
    const first = await family(b, walker, kept);
    const second = (await refresh(kept, first)).body.refresh_token!;
    expect((await refresh(kept, second)).status).toBe(200);
    expect((await refresh(kept, first)).status).toBe(400);
    // RFC 7009 revocation of a current token.
    expect((await tokenEndpoint('/oauth/revoke', kept, { token: await family(b, walker, kept) })).status).toBe(200);
    // A family that stays active, one rotation in.
    expect((await refresh(kept, await family(b, walker, kept))).status).toBe(200);
    // A family that stays active, never rotated.
    await family(b, walker, kept);
    // A replayed code revokes its family; a code never exchanged.
    const replayed = await codeFor(b, walker, kept);
    expect((await exchange(kept, replayed)).status).toBe(200);
    expect((await exchange(kept, replayed)).status).toBe(400);
    await codeFor(b, walker, kept);

    // A webhook with a delivery on the kept application, and one on the application deleted below (deleted with it).
    const hooks = createWebhookRepo({ doc, table: service.tableName });
    await hooks.setUrl(kept.clientId, 'http://127.0.0.1:9/hook');
    await hooks.setUrl(deleted.clientId, 'http://127.0.0.1:9/hook');
    const deliveredAt = new Date();
    await hooks.createDelivery({ clientId: kept.clientId, webhookId: newWebhookId(deliveredAt), eventType: 'webhook.test', payload: '{}' }, deliveredAt);

    // An application deleted by its developer while two users have consented (one holds tokens).
    const other = await createAccount(service);
    const otherBrowser = new Browser(service.authUrl);
    await family(b, walker, deleted);
    await codeFor(otherBrowser, other, deleted);
    const deletePath = `/developer/apps/${deleted.clientId}/delete`;
    expect((await submit(developer, deletePath, deletePath, { confirm_name: deleted.name })).status).toBe(303);

    // An application the user revokes on the account page.
    await family(b, walker, revoked);
    expect((await submit(b, '/account', `/account/apps/${revoked.clientId}/revoke`)).status).toBe(303);

    // A password reset (which ends the sessions), and one requested but never used.
    const anonymous = new Browser(service.authUrl);
    expect((await submit(anonymous, '/password-reset', '/password-reset', { email })).status).toBe(303);
    const reset = linkToken(service, (await mailTo(service, email)).find((m) => m.subject === 'Reset your password')!.text, '/password-reset/confirm');
    const newPassword = 'a brand new passphrase for ada';
    const done = await submit(anonymous, `/password-reset/confirm?token=${reset}`, '/password-reset/confirm', { password: newPassword }, ['sign_out_apps']);
    expect(done).toMatchObject({ status: 303, location: '/password-reset/confirm?done=password-changed' });
    expect((await submit(anonymous, '/password-reset', '/password-reset', { email })).status).toBe(303);

    // A login that ends with a logout, and one that stays.
    const leaving = new Browser(service.authUrl);
    expect((await signIn(leaving, { ...walker, password: newPassword })).status).toBe(303);
    expect((await submit(leaving, '/account', '/logout')).status).toBe(303);
    expect((await signIn(new Browser(service.authUrl), { ...walker, password: newPassword })).status).toBe(303);

    // Two-step sign-in: an account with an authenticator app (its recovery codes shown)
    // and a passkey, both added through the security page, and an unanswered registration's challenge.
    const guarded = await createAccount(service);
    const guardedBrowser = new Browser(service.authUrl);
    expect((await signIn(guardedBrowser, guarded)).status).toBe(303);
    const { secret, recoveryCodes } = await enrolAuthenticatorApp(guardedBrowser);
    const passkey = await addPasskey(guardedBrowser, guarded.user.id, 'Laptop');
    await passkeyRegistrationOptions(guardedBrowser);
    // Signed in with the password and a wrong code then the app's code, with the password and a
    // recovery code, with the passkey; a password step left waiting for its code; unanswered sign-in options.
    const withCode = new Browser(service.authUrl);
    const passwordStep = await signIn(withCode, guarded);
    expect(passwordStep).toMatchObject({ status: 303, location: '/login/second-factor?return_to=%2Faccount' });
    expect((await secondStep(withCode, passwordStep.location!, String((Number(nextTotpCode(secret)) + 1) % 1_000_000).padStart(6, '0'))).status).toBe(401);
    expect((await secondStep(withCode, passwordStep.location!, nextTotpCode(secret))).status).toBe(303);
    const withRecoveryCode = new Browser(service.authUrl);
    expect((await secondStep(withRecoveryCode, (await signIn(withRecoveryCode, guarded)).location!, recoveryCodes[0]!)).status).toBe(303);
    expect((await signInWithPasskey(new Browser(service.authUrl), passkey)).status).toBe(303);
    const waiting = await signIn(new Browser(service.authUrl), guarded);
    expect(waiting.location).toBe('/login/second-factor?return_to=%2Faccount');
    await passkeySignInOptions(new Browser(service.authUrl));
    // An authenticator app whose recovery codes were never shown (the browser did not follow the
    // redirect), and an enrolment never confirmed.
    await enrolAuthenticatorApp(developer, { showCodes: false });
    expect((await otherBrowser.get('/account/security/totp')).status).toBe(200);

    // A signing-key rotation step writes the key schedule.
    const rotationDoc = createDocumentClient({ endpoint: service.dynamodbEndpoint });
    await rotateSigningKeys({ repo: createSigningKeyRepo({ doc: rotationDoc, table: service.tableName }), store: createLocalKeyStore(service.signingKeyFile) }, { mode: 'now' });
    rotationDoc.destroy();
    const finishedAt = epoch() + 1;

    // Act
    const items = await scanTable();

    // Assess
    const byKey = new Map(items.map((item) => [`${String(item.pk)}|${String(item.sk)}`, item]));
    const find: Lookup = (pk, sk) => byKey.get(`${pk}|${sk}`);
    const problems: string[] = [];
    const states = new Set<string>();
    for (const item of items) {
      const key = `${String(item.pk)} / ${String(item.sk)}`;
      const kind = KINDS.find((k) => k.pk.test(String(item.pk)) && k.sk.test(String(item.sk)));
      if (!kind) {
        problems.push(`${key}: no known kind has this key shape`);
        continue;
      }
      const lifetime = kind.lifetime(item, find);
      states.add(lifetime.state);
      const expiresAt = item.expiresAt;
      if ('dead' in lifetime) problems.push(`${key} (${lifetime.state}): should not exist: ${lifetime.dead}`);
      else if ('expiresAt' in lifetime) {
        if (expiresAt !== lifetime.expiresAt || lifetime.expiresAt <= startedAt || lifetime.expiresAt > finishedAt + HOUR) {
          problems.push(`${key} (${lifetime.state}): expiresAt ${String(expiresAt)}, not the end of its window ${lifetime.expiresAt}`);
        }
      } else if (lifetime.ttl === 'none') {
        if (expiresAt !== undefined) problems.push(`${key} (${lifetime.state}): must not expire, has expiresAt ${String(expiresAt)}`);
      } else if (typeof expiresAt !== 'number') {
        problems.push(`${key} (${lifetime.state}): must carry a TTL of ${lifetime.ttl} s, has none`);
      } else if (expiresAt < startedAt + lifetime.ttl || expiresAt > finishedAt + lifetime.ttl) {
        problems.push(`${key} (${lifetime.state}): expiresAt ${expiresAt - epoch()} s from now, not ${lifetime.ttl} s after its write`);
      }
    }
    expect(problems).toEqual([]);
    // The walk produced every state, so each rule above was exercised.
    expect([...states].sort()).toEqual([
      'account throttle record', 'account-address throttle record', 'active family', 'active family, rotated', 'address throttle record', 'application',
      'authenticator app', 'authenticator enrolment',
      'code revoked unused', 'confirmation link', 'consent', 'device', 'device authorization denied', 'device authorization waiting',
      'e-mail address', 'known browser',
      'mail count', 'passkey', 'passkey claim', 'passkey registration challenge', 'passkey sign-in challenge', 'password reset link', 'pending sign-in',
      'recovery codes', 'recovery codes to show', 'revoked family', 'second-factor throttle record', 'secret to show', 'session', 'signing-key schedule', 'unused code', 'user',
      'user code', 'user code entries of an account', 'user code entries of an address', 'webhook delivery', 'webhook subscription',
    ]);
    // The deleted application's webhook went with it.
    expect(items.filter((item) => item.sk === 'WEBHOOK').map((item) => item.pk)).toEqual([`CLIENT#${kept.clientId}`]);
    // The three secrets shown on their page were deleted by it; only the rotation's, never shown, waits out its TTL.
    expect(items.filter((item) => String(item.pk).startsWith('REVEAL#')).map((item) => [item.clientId, item.reason])).toEqual([[kept.clientId, 'rotated']]);
    // What the flows deleted is gone: the deleted application's consents, the revoked one's, used links.
    const consents = items.filter((item) => String(item.sk).startsWith('CONSENT#'));
    expect(consents.map((c) => c.clientId)).not.toContain(deleted.clientId);
    expect(consents.filter((c) => c.userId === walker.user.id).map((c) => c.clientId)).toEqual([kept.clientId]);
    expect(find(`LINK#${hashSecret(confirmation)}`, 'LINK')).toBeUndefined();
    expect(find(`LINK#${hashSecret(reset)}`, 'LINK')).toBeUndefined();
    // The user code entered and decided is gone; the one never entered waits out its 10 minutes.
    expect(items.filter((item) => String(item.pk).startsWith('USERCODE#')).length).toBe(1);
    // And what the two-step sign-ins used up: the answered challenges, the completed sign-ins, the
    // confirmed enrolment, the codes shown, the recovery code spent.
    expect(items.filter((item) => String(item.pk).startsWith('CHALLENGE#')).map((item) => item.purpose).sort()).toEqual(['authenticate', 'register']);
    expect(items.filter((item) => String(item.pk).startsWith('SIGNIN#')).map((item) => item.userId)).toEqual([guarded.user.id]);
    expect(find(`USER#${guarded.user.id}`, 'FACTOR#TOTP#ENROLMENT')).toBeUndefined();
    expect(find(`USER#${guarded.user.id}`, 'FACTOR#RECOVERY#REVEAL')).toBeUndefined();
    expect((find(`USER#${guarded.user.id}`, 'FACTOR#RECOVERY')!.codes as Set<string>).size).toBe(9);
  });

  describe('an item past its TTL that DynamoDB has not deleted yet counts as absent', () => {
    const SECRET = 'lifetimes-client-secret-0123456789abcdef0123';
    let client: Client;
    let tokens: TokenService;
    let current: Date;
    const credentials = () => ({ clientId: client.clientId, clientSecret: SECRET, basic: false });

    beforeAll(async () => {
      client = {
        clientId: randomUUID(), secretHash: hashSecret(SECRET), name: 'Clocked app', description: 'Lifetimes.', website: 'https://clocked.example',
        redirectUris: ['https://clocked.example/callback'], developerId: randomUUID(), developerName: 'Clock Maker', createdAt: '2026-01-01T00:00:00.000',
      };
      await repos.clients.createClient(client);
      tokens = createTokenService({
        grants: repos.grants, signer: Promise.resolve(createLocalSigner(service.signingKeyFile)), issuer: service.authUrl,
        audience: service.apiUrl, now: () => current,
      });
    });

    const advance = (seconds: number) => {
      current = new Date(current.getTime() + seconds * 1000);
    };

    /** A code issued now, exchanged: the first refresh token, and the code. */
    async function exchanged() {
      current = new Date();
      const [userId, grantGeneration] = [randomUUID(), randomUUID()];
      await repos.grants.saveConsent({ userId, clientId: client.clientId, scopes: ['read_user'], grantedAt: formatTimestamp(current), grantGeneration });
      const { code, stored } = newAuthorizationCode({
        clientId: client.clientId, userId, redirectUri: client.redirectUris[0]!, scopes: ['read_user'],
        expiresAt: Math.floor(current.getTime() / 1000) + 10 * MINUTE, grantGeneration,
      });
      await repos.grants.createCode(stored);
      const issued = await tokens.exchangeCode(credentials(), { code, redirectUri: client.redirectUris[0]! });
      const { familyId } = grantTokenNames(issued.refresh_token)!;
      return { code, refreshToken: issued.refresh_token, familyId };
    }

    const familyStatus = async (familyId: string) => (await repos.grants.getFamily(familyId))?.status;

    it('a rotated refresh token whose successor was used, presented a year after its rotation, is still reuse (no 30-day limit): refused, and the family revoked', async () => {
      // Prepare
      const { refreshToken, familyId } = await exchanged();
      const { refresh_token: successor } = await tokens.refresh(credentials(), { refreshToken });
      // The successor used: until then the rotated token would get it again (a lost response's retry).
      const { refresh_token: third } = await tokens.refresh(credentials(), { refreshToken: successor });
      advance(365 * DAY);

      // Act
      const outcome = tokens.refresh(credentials(), { refreshToken });

      // Assess
      await expect(outcome).rejects.toThrow(InvalidGrantError);
      expect(await familyStatus(familyId)).toBe('revoked');
      await expect(tokens.refresh(credentials(), { refreshToken: successor })).rejects.toThrow(InvalidGrantError);
      await expect(tokens.refresh(credentials(), { refreshToken: third })).rejects.toThrow(InvalidGrantError);
    });

    it('a revoked family past its 30 days is unknown: its current token is refused, and nothing is written', async () => {
      // Prepare
      const { refreshToken, familyId } = await exchanged();
      await revokeToken(repos.grants, credentials(), refreshToken, current);
      const revoked = await repos.grants.getFamily(familyId);
      advance(30 * DAY);

      // Act
      const outcome = tokens.refresh(credentials(), { refreshToken });

      // Assess
      await expect(outcome).rejects.toThrow(InvalidGrantError);
      expect(await repos.grants.getFamily(familyId)).toEqual(revoked);
    });

    it('the same token (its successor used) presented a second earlier is reuse: refused, and the family revoked', async () => {
      // Prepare
      const { refreshToken, familyId } = await exchanged();
      const { refresh_token: successor } = await tokens.refresh(credentials(), { refreshToken });
      // The successor used: until then the rotated token would get it again (a lost response's retry).
      await tokens.refresh(credentials(), { refreshToken: successor });
      advance(30 * DAY - 1);

      // Act
      const outcome = tokens.refresh(credentials(), { refreshToken });

      // Assess
      await expect(outcome).rejects.toThrow(InvalidGrantError);
      expect(await familyStatus(familyId)).toBe('revoked');
    });

    it('a used code replayed after its 10 minutes is still known to the family it became: refused, and the family revoked', async () => {
      // Prepare
      const { code, refreshToken, familyId } = await exchanged();
      advance(10 * MINUTE);

      // Act
      const outcome = tokens.exchangeCode(credentials(), { code, redirectUri: client.redirectUris[0]! });

      // Assess
      await expect(outcome).rejects.toThrow(InvalidGrantError);
      expect(await familyStatus(familyId)).toBe('revoked');
      await expect(tokens.refresh(credentials(), { refreshToken })).rejects.toThrow(InvalidGrantError);
    });

    it('login throttle records a day past their last failure neither delay a login nor add to the next count', async () => {
      // Prepare: twenty failures a day and a minute ago, on the account from the address, on the account and on the address
      const account = await createAccount(service);
      const address = nextLoopbackAddress();
      const b = new Browser(service.authUrl, { sourceAddress: address });
      const dayAgo = Date.now() - DAY * 1000 - 60_000;
      for (const [scope, subject] of [['account-address', `${account.user.email} ${address}`], ['account', account.user.email], ['address', address]] as const) {
        await putThrottleRecord({ doc, table: service.tableName }, scope, subject, { failures: 20, nextAttemptAt: dayAgo + 900_000, expiresAt: Math.floor(dayAgo / 1000) + DAY });
      }

      // Act
      const failed = await submit(b, '/login', '/login', { email: account.user.email, password: 'wrong' });
      const records = await repos.throttle.getRecords(account.user.email, address);
      const login = await signIn(b, account);

      // Assess
      expect(failed.status).toBe(401);
      expect(records.map((r) => [r.scope, r.failures])).toEqual([['account-address', 1], ['account', 1], ['address', 1]]);
      expect(login.status).toBe(303);
    });

    it('a known browser past its 30 days is unknown: it no longer lifts the account-wide limit', async () => {
      // Prepare: the browser signed in 30 days and a second ago; the account has reached its limit since.
      const account = await createAccount(service);
      const b = new Browser(service.authUrl, { sourceAddress: nextLoopbackAddress() });
      const old = repos.knownBrowsers.newKnownBrowser(account.user.id, 30 * DAY, Date.now() - 30 * DAY * 1000 - 1000);
      await doc.send(new PutCommand(old.item.Put!));
      b.jar.set('known_browser', old.token);
      await putThrottleRecord({ doc, table: service.tableName }, 'account', account.user.email, { failures: 10, nextAttemptAt: Date.now() + 60_000 });

      // Act
      const login = await signIn(b, account);

      // Assess
      expect(login.status).toBe(429);
    });

    it('a new client secret not shown within its 10 minutes is never shown', async () => {
      // Prepare: an application registered 10 minutes and a second ago, its browser holding the key
      const account = await createAccount(service);
      const b = new Browser(service.authUrl);
      expect((await signIn(b, account)).status).toBe(303);
      const secret = randomToken();
      const app: Client = { ...client, clientId: randomUUID(), secretHash: hashSecret(secret), developerId: account.user.id };
      const { reveal, cookie } = newSecretReveal(app, secret, 'registered', new Date(Date.now() - 10 * MINUTE * 1000 - 1000), false);
      await repos.clients.registerClient(app, reveal);
      b.jar.absorb([cookie]);

      // Act
      const page = await b.get(`/developer/apps/${app.clientId}/secret`);

      // Assess
      expect(page.status).toBe(200);
      expect(page.text).not.toContain(secret);
      expect(textOf(page.text)).toContain('A client secret is shown only once');
    });

    it('a session past its 8 hours signs nobody in, and a link past its hour is refused', async () => {
      // Prepare
      const account = await createAccount(service);
      const session = await repos.sessions.createSession(account.user.id, new Date(Date.now() - 8 * HOUR * 1000 - 1000));
      const link = await repos.links.createLink('reset-password', account.user.id, new Date(Date.now() - HOUR * 1000 - 1000));
      const b = new Browser(service.authUrl);
      b.jar.set('session', session);

      // Act
      const page = await b.get('/account');
      const reset = await b.get(`/password-reset/confirm?token=${link}`);

      // Assess
      expect(page).toMatchObject({ status: 302, location: '/login?return_to=%2Faccount' });
      expect(reset.status).toBe(400);
      expect(textOf(reset.text)).toContain('This reset link is invalid, expired or already used.');
    });

    it('a mail count of a window that has ended limits nothing', async () => {
      // Prepare: the address used up the previous hour's e-mails
      const address = `counted-${randomUUID()}@example.com`;
      const windowStart = Math.floor(Date.now() / 1000 / HOUR) * HOUR;
      const previousHour = new Date((windowStart - HOUR + 60) * 1000);
      for (let i = 0; i < 5; i++) expect(await repos.mailLimits.takeMailSlot(address, previousHour)).toBe(true);
      expect(await repos.mailLimits.takeMailSlot(address, previousHour)).toBe(false);

      // Act
      const now = await repos.mailLimits.takeMailSlot(address, new Date((windowStart + 60) * 1000));

      // Assess
      expect(now).toBe(true);
    });
  });
});

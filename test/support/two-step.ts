import { base32 } from '@otplib/plugin-base32-scure';
import { crypto } from '@otplib/plugin-crypto-node';
import { generateSync } from '@otplib/totp';
import { Browser, formFields, type Reply } from './oauth-client';
import { SoftwarePasskey } from './software-passkey';

// The second factors (authenticator app, recovery codes, passkeys) driven over HTTP as a user's browser drives them, for tests that need an
// account with an authenticator app or a passkey made the real way (pages, forms, ceremonies).

/** The code an authenticator app shows for `secret` at `at` (epoch ms). */
export const totpCodeAt = (secret: string, at: number) => generateSync({ secret, crypto, base32, epoch: Math.floor(at / 1000) });

/**
 * The code an authenticator app will show in 30 seconds: accepted now (a step either side is) and
 * after any code of the current step, so a sign-in right after the enrolment needs no waiting.
 */
export const nextTotpCode = (secret: string) => totpCodeAt(secret, Date.now() + 30_000);

/**
 * Turns two-step sign-in on for the account signed in on `b`: the setup page's key, its current
 * code. With `showCodes` (the default) the browser follows to the recovery codes, which that page
 * shows once and deletes; without, they stay waiting to be shown. The key, and the codes if shown.
 */
export async function enrolAuthenticatorApp(b: Browser, { showCodes = true } = {}): Promise<{ secret: string; recoveryCodes: string[] }> {
  const setup = await b.get('/account/security/totp');
  if (setup.status !== 200) throw new Error(`GET /account/security/totp answered ${setup.status}`);
  const secret = /id="totp-secret">([^<]+)</.exec(setup.text)![1]!.replace(/\s/g, '');
  const confirmed = await b.postForm('/account/security/totp', { ...formFields(setup.text, '/account/security/totp'), code: totpCodeAt(secret, Date.now()) });
  if (confirmed.status !== 303 || confirmed.location !== '/account/security/recovery-codes') throw new Error(`the first code answered ${confirmed.status}`);
  if (!showCodes) return { secret, recoveryCodes: [] };
  const shown = await b.get(confirmed.location);
  return { secret, recoveryCodes: [...shown.text.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!) };
}

/** Asks for a passkey's registration options on the security page of `b`, as its script does: the options' JSON. */
export async function passkeyRegistrationOptions(b: Browser): Promise<{ challenge: string; rp: { id: string }; fields: Record<string, string> }> {
  const page = await b.get('/account/security');
  const fields = formFields(page.text, '/account/security/passkeys');
  const options = await b.postForm('/account/security/passkeys/options', { csrf: fields.csrf! });
  if (options.status !== 200) throw new Error(`POST /account/security/passkeys/options answered ${options.status}`);
  return { ...(JSON.parse(options.text) as { challenge: string; rp: { id: string } }), fields };
}

/** Registers a new software passkey named `name` to the account (`userId`) signed in on `b`, through the security page; the passkey. */
export async function addPasskey(b: Browser, userId: string, name: string, { backedUp = false } = {}): Promise<SoftwarePasskey> {
  const passkey = new SoftwarePasskey(userId);
  const { challenge, rp, fields } = await passkeyRegistrationOptions(b);
  const origin = new URL(b.baseUrl).origin;
  const added = await b.postForm('/account/security/passkeys', { ...fields, name, response: passkey.registration(challenge, origin, rp.id, { backedUp }) });
  if (added.status !== 303 || added.location !== '/account/security?done=passkey-added') throw new Error(`adding a passkey answered ${added.status}`);
  return passkey;
}

/** Asks for a passkey sign-in's options on the sign-in page of `b`, as its script does: the challenge, the RP id, the page's form. */
export async function passkeySignInOptions(b: Browser, returnTo = '/account'): Promise<{ challenge: string; rpId: string; fields: Record<string, string> }> {
  const login = await b.get(`/login?return_to=${encodeURIComponent(returnTo)}`);
  const fields = formFields(login.text, '/login/passkey');
  const options = await b.postForm('/login/passkey/options', { csrf: fields.csrf! });
  if (options.status !== 200) throw new Error(`POST /login/passkey/options answered ${options.status}`);
  return { ...(JSON.parse(options.text) as { challenge: string; rpId: string }), fields };
}

/** Signs in on `b` with `passkey` (options, then the answer); the reply to the answer. */
export async function signInWithPasskey(b: Browser, passkey: SoftwarePasskey, returnTo = '/account'): Promise<Reply> {
  const { challenge, rpId, fields } = await passkeySignInOptions(b, returnTo);
  return b.postForm('/login/passkey', { ...fields, response: passkey.answer(challenge, new URL(b.baseUrl).origin, rpId) });
}

/** Posts `code` on the second-factor page a password step led to (`location`); the reply. */
export async function secondStep(b: Browser, location: string, code: string): Promise<Reply> {
  const form = await b.get(location);
  if (form.status !== 200) throw new Error(`GET ${location} answered ${form.status}`);
  return b.postForm('/login/second-factor', { ...formFields(form.text, '/login/second-factor'), code });
}

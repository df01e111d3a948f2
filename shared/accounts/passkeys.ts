import { randomBytes } from 'node:crypto';
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { KNOWN_BROWSER_TTL_SECONDS, nextAttemptAfterReserving, retryAfterSeconds, FREE_ATTEMPTS } from '#shared/accounts/login-throttle';
import type { BatchReader } from '#shared/data/batch-read';
import type { StoredPasskey } from '#shared/data/passkey-repo';
import type { User } from '#shared/domain/user';
import { formatTimestamp } from '#shared/domain/time';
import { countMetric, METRIC } from '#shared/metrics';
import type { RelyingParty } from '#shared/accounts/relying-party';
import { signInAlertOf, type SignInAlert } from '#shared/accounts/sign-in-alert';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import { passkeyName, readPasskeyResponse } from '#shared/accounts/passkey-answers';

export { MAX_PASSKEY_NAME, passkeyName, readPasskeyResponse } from '#shared/accounts/passkey-answers';

// Passkeys (WebAuthn, discoverable credentials), with @simplewebauthn/server for the ceremonies'
// cryptography, for the relying party of relying-party.ts. The options are plain JSON made here
// (WebAuthn Level 3's PublicKeyCredential*OptionsJSON); only the verification needs the library,
// which passkey-verify.ts holds and this module imports on first use.

/** The module of the library's checks, bundled on its own beside the functions that verify (their `lazyModules`). */
export const PASSKEY_VERIFY_ENTRY = 'shared/accounts/passkey-verify.ts';
// From source (tests, local service) the checks are this file's neighbour; bundled, passkey-verify.mjs
// beside the bundle. The specifier is computed, so esbuild leaves the import to run time.
const VERIFY_URL = new URL(import.meta.url.endsWith('.ts') ? './passkey-verify.ts' : './passkey-verify.mjs', import.meta.url).href;
let verifier: Promise<typeof import('#shared/accounts/passkey-verify')> | undefined;
/** The library's checks, loaded once per process (again after a failed load). */
function checks(): Promise<typeof import('#shared/accounts/passkey-verify')> {
  verifier ??= (import(VERIFY_URL) as Promise<typeof import('#shared/accounts/passkey-verify')>).catch((error: unknown) => {
    verifier = undefined;
    throw error;
  });
  return verifier;
}

type Transports = NonNullable<PublicKeyCredentialCreationOptionsJSON['excludeCredentials']>[number]['transports'];

/** The public-key algorithms a new passkey may use, in order of preference: Ed25519, ES256, RS256 (the library's defaults). */
const ALGORITHMS = [-8, -7, -257];
/** How long the browser waits for the person (the challenge lives as long: CHALLENGE_SECONDS). */
const CEREMONY_TIMEOUT_MS = 300_000;

/** Why a passkey ceremony was refused; each has its message (PASSKEY_REFUSALS). */
export type PasskeyRefusal = 'malformed' | 'challenge' | 'origin' | 'unknown' | 'invalid' | 'taken' | 'full' | 'name' | 'other-account';

/** What the pages say for each refusal. */
export const PASSKEY_REFUSALS: Record<PasskeyRefusal, string> = {
  malformed: 'The browser’s passkey answer could not be read. Try again; if it keeps happening, use your password.',
  challenge: 'This passkey request has expired or was used already. Try again.',
  origin: 'This passkey answer was made for another site, and is not accepted here.',
  unknown: 'This passkey is not registered to an account here. Sign in with your password, then add the passkey on your account page.',
  invalid: 'This passkey’s signature could not be verified. Try again, or sign in with your password.',
  taken: 'This passkey is registered already.',
  full: 'An account can have at most 10 passkeys. Remove one before adding another.',
  name: 'Give the passkey a name of 1 to 50 characters, so you can tell it from the others (for example “Laptop”).',
  'other-account': 'This passkey is of another account, not of the one signing in here. Use a passkey of this account or its code, or start again.',
};

/** A new challenge: 256 random bits, base64url (the options carry it; the table keeps its hash). */
const newChallenge = () => randomBytes(32).toString('base64url');

/** The repository operations registrationOptions uses (its function's grants: functions/needs.ts). */
export const REGISTRATION_OPTIONS_USES = { passkeys: ['passkeysOf', 'createChallenge'] } as const satisfies UsesDeclaration;

/**
 * The options of a passkey's registration for a signed-in user: a discoverable credential
 * (resident key required) with user verification, no attestation, and the user's passkeys excluded
 * (an authenticator refuses to make a second one). Its challenge is stored for 5 minutes. Requests:
 * Query (the user's passkeys) + PutItem (challenge).
 */
export async function registrationOptions(
  passkeys: Uses<typeof REGISTRATION_OPTIONS_USES>['passkeys'], rp: RelyingParty, user: User, now: Date,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await passkeys.passkeysOf(user.id);
  const challenge = newChallenge();
  await passkeys.createChallenge(challenge, 'register', user.id, now);
  return {
    rp: { name: rp.name, id: rp.id },
    user: { id: Buffer.from(user.id).toString('base64url'), name: user.email, displayName: `${user.firstname} ${user.lastname}` },
    challenge,
    pubKeyCredParams: ALGORITHMS.map((alg) => ({ alg, type: 'public-key' as const })),
    timeout: CEREMONY_TIMEOUT_MS,
    attestation: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, type: 'public-key' as const, transports: p.transports as Transports })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    extensions: { credProps: true },
  };
}

/** The repository operations authenticationOptions uses (its function's grants: functions/needs.ts). */
export const AUTHENTICATION_OPTIONS_USES = { passkeys: ['createChallenge'] } as const satisfies UsesDeclaration;

/**
 * The options of a passkey sign-in: any passkey of this site (no allowCredentials: the browser
 * offers the user's discoverable credentials, in its autofill too), user verification required.
 * Its challenge is stored for 5 minutes. One PutItem.
 */
export async function authenticationOptions(passkeys: Uses<typeof AUTHENTICATION_OPTIONS_USES>['passkeys'], rp: RelyingParty, now: Date): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const challenge = newChallenge();
  await passkeys.createChallenge(challenge, 'authenticate', undefined, now);
  return { challenge, timeout: CEREMONY_TIMEOUT_MS, rpId: rp.id, allowCredentials: [], userVerification: 'required' };
}

/** The repository operations registerPasskey uses (its function's grants: functions/needs.ts). */
export const REGISTER_PASSKEY_USES = { passkeys: ['takeChallenge', 'addPasskey'] } as const satisfies UsesDeclaration;

/**
 * Registers the passkey a signed-in user's browser just made: the answer read, its challenge taken
 * (single use, this user's, live), its origin this site's, its attestation verified (user
 * verification required), then stored (passkey, credential claim, count: one transaction). Nothing
 * is written when it is refused. Requests: DeleteItem (challenge) + TransactWriteItems.
 */
export async function registerPasskey(
  passkeys: Uses<typeof REGISTER_PASSKEY_USES>['passkeys'], rp: RelyingParty, user: User, answer: { response: string; name: string }, now: Date,
): Promise<{ outcome: 'added'; name: string } | { outcome: 'refused'; refusal: PasskeyRefusal }> {
  const refused = (refusal: PasskeyRefusal) => ({ outcome: 'refused' as const, refusal });
  const name = passkeyName(answer.name);
  if (name === undefined) return refused('name');
  const read = readPasskeyResponse(answer.response, 'create');
  if (!read) return refused('malformed');
  if (!(await passkeys.takeChallenge(read.challenge, 'register', user.id, now))) return refused('challenge');
  if (read.origin !== rp.origin) return refused('origin');
  let registration;
  try {
    registration = await (await checks()).verifyRegistrationResponse({
      response: read.response, expectedChallenge: read.challenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: true,
    });
  } catch {
    return refused('invalid');
  }
  if (!registration.verified) return refused('invalid');
  const { credential, credentialBackedUp } = registration.registrationInfo;
  const stored: StoredPasskey = {
    credentialId: credential.id, publicKey: Buffer.from(credential.publicKey).toString('base64url'), counter: credential.counter,
    transports: credential.transports ?? [], name, createdAt: formatTimestamp(now), backedUp: credentialBackedUp,
  };
  const added = await passkeys.addPasskey(user.id, stored);
  return added === 'added' ? { outcome: 'added', name } : refused(added);
}

export type PasskeySignInOutcome =
  | { outcome: 'signed-in'; userId: string; sessionId: string; knownBrowserToken: string; alert?: SignInAlert }
  | { outcome: 'throttled'; retryAfterSeconds: number }
  | { outcome: 'refused'; refusal: PasskeyRefusal };

/** The repository operations signInWithPasskey uses (its functions' grants: functions/needs.ts). */
export const PASSKEY_SIGN_IN_USES = {
  throttle: ['addressRecordRead', 'reserve', 'addressCreditItem'],
  knownBrowsers: ['knownBrowserRead', 'newKnownBrowser', 'forgetKnownBrowserItem'],
  passkeys: ['passkeyRead', 'takeChallenge', 'usePasskeyItem'],
  sessions: ['createSession'],
  users: ['signInProfileRead', 'signedInItem'],
} as const satisfies UsesDeclaration;

/**
 * A sign-in with a passkey, which is both factors at once (something the user has, unlocked by
 * something she is or knows: user verification is required). Like a password attempt, it first
 * reserves one failure on its source address's throttle record (10 free, then the login's waits):
 * malformed answers, replayed or expired challenges, another site's answers, unknown credentials
 * and bad signatures all count. Then the challenge is taken (single use), the answer's origin and
 * signature checked against the passkey stored under the user handle (a credential registered to
 * another user is not found there), and one transaction starts the session, records the passkey's
 * counter, gives the reservation back, replaces the known browser and records the user's last
 * sign-in (a browser new to the account gets its owner an `alert`). As the second step of a sign-in
 * whose password was right (`pendingUserId`: its user, as its cookie names it), the passkey must be
 * of that user: another account's is refused (`other-account`, counted), no session started.
 * Requests: BatchGetItem (address record, passkey, known browser, user) + UpdateItem (reservation) +
 * DeleteItem (challenge) + TransactWriteItems = 4.
 */
export async function signInWithPasskey(
  repos: Uses<typeof PASSKEY_SIGN_IN_USES> & { batch: BatchReader },
  rp: RelyingParty,
  attempt: { response: string; address: string; browserToken?: string; now: number; browser?: string; pendingUserId?: string },
): Promise<PasskeySignInOutcome> {
  const { batch, knownBrowsers, passkeys, sessions, throttle, users } = repos;
  const { address, browserToken, now } = attempt;
  const read = readPasskeyResponse(attempt.response, 'get');
  const [record, stored, browser, profile] = await batch.read([
    throttle.addressRecordRead(address, now), passkeys.passkeyRead(read?.userId, read?.credentialId), knownBrowsers.knownBrowserRead(browserToken, now),
    users.signInProfileRead(read?.userId),
  ] as const);
  const wait = retryAfterSeconds([record], now);
  const throttled = (seconds: number): PasskeySignInOutcome => {
    countMetric(METRIC.loginThrottled);
    return { outcome: 'throttled', retryAfterSeconds: seconds };
  };
  if (wait > 0) return throttled(wait);
  const reserved = await throttle.reserve([{ record, freeAttempts: FREE_ATTEMPTS.address, nextAttemptAt: nextAttemptAfterReserving(record, now) }], now);
  if (!reserved.reserved) return throttled(Math.max(1, retryAfterSeconds(reserved.current, now)));
  const refused = (refusal: PasskeyRefusal): PasskeySignInOutcome => {
    countMetric(METRIC.loginFailures);
    return { outcome: 'refused', refusal };
  };
  if (!read) return refused('malformed');
  if (!(await passkeys.takeChallenge(read.challenge, 'authenticate', undefined, new Date(now)))) return refused('challenge');
  if (read.origin !== rp.origin) return refused('origin');
  if (!stored) return refused('unknown');
  let verification;
  try {
    verification = await (await checks()).verifyAuthenticationResponse({
      response: read.response, expectedChallenge: read.challenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: true,
      credential: { id: stored.credentialId, publicKey: Buffer.from(stored.publicKey, 'base64url'), counter: stored.counter },
    });
  } catch {
    return refused('invalid');
  }
  if (!verification.verified) return refused('invalid');
  if (attempt.pendingUserId !== undefined && read.userId !== attempt.pendingUserId) return refused('other-account');
  const userId = read.userId!;
  const known = knownBrowsers.newKnownBrowser(userId, KNOWN_BROWSER_TTL_SECONDS, now);
  const details = { browser: attempt.browser ?? 'An unknown browser', address };
  const sessionId = await sessions.createSession(userId, new Date(now), [
    passkeys.usePasskeyItem(userId, stored.credentialId, verification.authenticationInfo.newCounter, new Date(now)),
    throttle.addressCreditItem(address, now),
    known.item,
    ...(browser ? [knownBrowsers.forgetKnownBrowserItem(browserToken!)] : []),
    users.signedInItem(userId, new Date(now)),
  ], details);
  const alert = signInAlertOf(profile, browser?.userId === userId, details, now);
  return { outcome: 'signed-in', userId, sessionId, knownBrowserToken: known.token, ...(alert ? { alert } : {}) };
}

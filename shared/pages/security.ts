import { SERVICE_NAME } from '#shared/views/theme';
import { batch, factors, passkeys, sessions } from '#shared/runtime';
import type { Factors } from '#shared/data/factor-repo';
import { hashSecret } from '#shared/secrets';
import { FEW_RECOVERY_CODES } from '#shared/accounts/recovery-codes';
import type { HttpResult } from '#shared/http/responses';
import type { PasskeyListing, SessionRow } from '#shared/views/security-pages';

/** The cookie holding the key of the recovery codes waiting to be shown once, sent only to their page. */
export const RECOVERY_KEY_COOKIE = 'recovery_key';
export const RECOVERY_CODES_PATH = '/account/security/recovery-codes';
/** The name authenticator apps show the account under. */
export const TOTP_ISSUER_NAME = SERVICE_NAME;

/** What the security page shows of an account: its authenticator app, recovery codes left and passkeys. */
export interface SecurityState {
  totp?: { enrolledAt: string };
  recoveryCodesLeft: number;
  /** At most FEW_RECOVERY_CODES left. */
  recoveryCodesLow: boolean;
  passkeys: PasskeyListing[];
  /** The live sessions, this browser's marked. */
  sessions: SessionRow[];
}

/**
 * The security page's state of a user signed in with `sessionId`: Query (passkeys) and Query on GSI1
 * (sessions) at once, and a BatchGetItem of the authenticator app and recovery codes alongside
 * unless the page read them already with its session (`stored`: its `ofUser` read).
 */
export async function securityState(userId: string, sessionId: string, stored?: Factors): Promise<SecurityState> {
  const [factorsOf, keys, live] = await Promise.all([
    stored ?? batch.read([factors.factorsRead(userId)] as const).then(([read]) => read), passkeys.passkeysOf(userId), sessions.sessionsOf(userId),
  ]);
  const current = hashSecret(sessionId);
  return {
    totp: factorsOf.totp, recoveryCodesLeft: factorsOf.recoveryCodeHashes.length, recoveryCodesLow: factorsOf.recoveryCodeHashes.length <= FEW_RECOVERY_CODES,
    passkeys: keys.map((p) => ({ id: hashSecret(p.credentialId), name: p.name, createdAt: p.createdAt, lastUsedAt: p.lastUsedAt })),
    sessions: live.map((s) => ({ ...s, current: s.id === current })),
  };
}

/** How recent a sign-in must be for a change to how the account signs in (EndpointDeclaration.recentSignIn). */
export const RECENT_SIGN_IN_SECONDS = 10 * 60;

/** A JSON answer of a page's script call (the passkey ceremonies' options): never cached. */
export function jsonOf(value: unknown): HttpResult {
  return { statusCode: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }, body: JSON.stringify(value) };
}

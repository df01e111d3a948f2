import { newRecoveryCodes, recoveryCodeHash } from '#shared/accounts/totp';
import { sealWith } from '#shared/oauth/sealing';
import { randomToken } from '#shared/secrets';
import type { Uses, UsesDeclaration } from '#shared/data/uses';

/** At most this many recovery codes left: the security page warns, and offers new ones. */
export const FEW_RECOVERY_CODES = 3;

/** The repository operations renewRecoveryCodes uses (its function's grants: functions/needs.ts). */
export const RENEW_RECOVERY_CODES_USES = { recoveryCodes: ['replaceRecoveryCodes'] } as const satisfies UsesDeclaration;

/**
 * Makes 10 new recovery codes for an account whose two-step sign-in is on, without turning it off:
 * their hashes replace the codes left (which stop working), and the codes are sealed under a new key
 * for their one showing, as at the enrolment (RecoveryCodeRepo.replaceRecoveryCodes: one
 * TransactWriteItems). Returns the key (for the browser's cookie), or `not-enrolled` with nothing
 * written when the account has no authenticator app.
 */
export async function renewRecoveryCodes(
  repo: Uses<typeof RENEW_RECOVERY_CODES_USES>['recoveryCodes'], userId: string, now: number,
): Promise<{ outcome: 'renewed'; revealKey: string } | { outcome: 'not-enrolled' }> {
  const codes = newRecoveryCodes();
  const revealKey = randomToken();
  const replaced = await repo.replaceRecoveryCodes({
    userId, recoveryCodeHashes: codes.map((code) => recoveryCodeHash(userId, code)), sealedCodes: sealWith(revealKey, codes.join('\n')), now: new Date(now),
  });
  return replaced ? { outcome: 'renewed', revealKey } : { outcome: 'not-enrolled' };
}

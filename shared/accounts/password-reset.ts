import { hashPassword } from '#shared/accounts/password';
import type { UserRecord } from '#shared/data/user-repo';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import { passwordProblem } from '#shared/domain/password-policy';
import { countMetric, METRIC } from '#shared/metrics';
import { END_EVERY_APP_ACCESS_USES, endEveryAppAccess } from '#shared/oauth/app-access';

/** The repository operations resetLinkAccount uses (its functions' grants: functions/needs.ts). */
export const RESET_LINK_USES = { links: ['readLink'], users: ['getUserRecord'] } as const satisfies UsesDeclaration;

/**
 * The account a password-reset link is for, while the link is good: GetItem (link), then GetItem
 * (user: a link of an earlier reset generation is dead, another link having been used since).
 */
export async function resetLinkAccount(
  repos: Uses<typeof RESET_LINK_USES>,
  token: string,
): Promise<{ record: UserRecord; generation: number } | undefined> {
  const link = token ? await repos.links.readLink('reset-password', token) : undefined;
  const record = link && (await repos.users.getUserRecord(link.userId));
  return record && record.resetGeneration === link.generation ? { record, generation: link.generation } : undefined;
}

export type NewPasswordOutcome =
  | { outcome: 'changed' }
  /** The link is used up, expired or of an earlier reset generation. */
  | { outcome: 'expired' }
  /** The password policy refuses the password: nothing changed. */
  | { outcome: 'refused'; problem: string };

/** The repository operations setNewPassword uses, resetLinkAccount's and endEveryAppAccess's among them. */
export const NEW_PASSWORD_USES = [
  RESET_LINK_USES, END_EVERY_APP_ACCESS_USES, { links: ['redeemLink'], sessions: ['sessionKeysOf'] },
] as const satisfies UsesDeclaration;

/**
 * Sets the new password, uses up the link (and with it every other reset link of the account: the
 * user moves to the next reset generation) and ends every session of the account in one
 * transaction: resetLinkAccount's two GetItems (and the password policy), Query (the sessions),
 * TransactWriteItems.
 *
 * With `signOutApps`, every application the user authorized loses its access first
 * (endEveryAppAccess). First, not after: until the password transaction the link still works, so a
 * failure on the way (503) leaves it usable and the user's retry finishes the revocation, which is
 * idempotent; the password transaction comes last.
 */
export async function setNewPassword(
  repos: Uses<typeof NEW_PASSWORD_USES>,
  token: string,
  password: string,
  signOutApps: boolean,
): Promise<NewPasswordOutcome> {
  const { grants, links, sessions } = repos;
  const account = await resetLinkAccount(repos, token);
  if (!account) return { outcome: 'expired' };
  const { user } = account.record;
  const problem = await passwordProblem(password, { email: user.email, names: [user.firstname, user.lastname] });
  if (problem) return { outcome: 'refused', problem };
  const passwordHash = await hashPassword(password);
  if (signOutApps) countMetric(METRIC.grantsRevoked, await endEveryAppAccess(grants, user.id));
  const signedInElsewhere = await sessions.sessionKeysOf(user.id);
  const redeemed = await links.redeemLink('reset-password', token, user.id, { passwordHash }, signedInElsewhere, new Date(), account.generation);
  return { outcome: redeemed ? 'changed' : 'expired' };
}

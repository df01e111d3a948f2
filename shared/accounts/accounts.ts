import { randomUUID } from 'node:crypto';
import { hashPassword } from '#shared/accounts/password';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import { greeting } from '#shared/email/mail-text';
import type { Mailer } from '#shared/email/mailer';
import { formatTimestamp } from '#shared/domain/time';
import { normalizeEmail, normalizeName, type User } from '#shared/domain/user';
import { ConflictError } from '#shared/errors';
import { countMetric, METRIC } from '#shared/metrics';

/**
 * What every account service uses besides its repositories: the mailer and the authorization server's
 * URL, which the links in the messages point to. The functions get the ones shared/runtime.ts builds.
 */
export interface MailDeps {
  mailer: Mailer;
  issuer: string;
}

/** The repository operations of signUp, sendConfirmation and requestPasswordReset (their functions' grants: functions/needs.ts). */
export const SIGN_UP_USES = { users: ['createUser'], links: ['newLink'], mailLimits: ['takeMailSlot'] } as const satisfies UsesDeclaration;
export const SEND_CONFIRMATION_USES = { links: ['createLink'], mailLimits: ['takeMailSlot'] } as const satisfies UsesDeclaration;
export const PASSWORD_RESET_REQUEST_USES = { users: ['findUserByEmail'], links: ['createLink'], mailLimits: ['takeMailSlot'] } as const satisfies UsesDeclaration;

// Every account e-mail counts against its address's limit (mail-limit-repo.ts) whether or not the
// address has an account, and a refused one is simply not sent: the callers answer the same either way.

/**
 * Creates the account with its confirmation link (one transaction) and sends the link. If the
 * address already has an account, its owner gets a notice instead — the caller's answer is the
 * same, so nothing is revealed. Past the address's e-mail limit, the account is still created but
 * no message is sent (its owner can ask for the confirmation again later).
 */
export async function signUp(deps: Uses<typeof SIGN_UP_USES> & MailDeps, form: Record<string, string>, now = new Date()): Promise<void> {
  const { users, links, mailLimits, mailer, issuer } = deps;
  const id = randomUUID();
  const stamp = formatTimestamp(now);
  const user: User = {
    id,
    firstname: normalizeName(form.firstname!),
    lastname: normalizeName(form.lastname!),
    avatar_url: `/avatars/${id}.png`,
    gender: Number(form.gender ?? 0) as User['gender'],
    email: normalizeEmail(form.email!),
    email_confirmed: false,
    creation_date: stamp,
    update_date: stamp,
  };
  const link = links.newLink('confirm-email', id, now);
  try {
    await users.createUser(user, await hashPassword(form.password!), [link.item]);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    if (!(await mailLimits.takeMailSlot(user.email))) return;
    await mailer.send({
      to: user.email,
      subject: 'Someone tried to create an account with your address',
      text: `Hello,\n\nSomeone tried to create an account with this e-mail address, which already has one.\nIf it was you, sign in at ${issuer}/login, or reset your password at ${issuer}/password-reset.\nIf it was not you, you can ignore this message.\n`,
    });
    return;
  }
  countMetric(METRIC.signUps);
  if (await mailLimits.takeMailSlot(user.email)) await mailConfirmation(deps, user, link.token);
}

/** E-mails a fresh single-use confirmation link to the user, within the address's e-mail limit. */
export async function sendConfirmation(deps: Uses<typeof SEND_CONFIRMATION_USES> & MailDeps, user: User): Promise<void> {
  if (!(await deps.mailLimits.takeMailSlot(user.email))) return;
  await mailConfirmation(deps, user, await deps.links.createLink('confirm-email', user.id));
}

async function mailConfirmation({ mailer, issuer }: MailDeps, user: User, token: string): Promise<void> {
  await mailer.send({
    to: user.email,
    subject: 'Confirm your e-mail address',
    text: `${greeting(user.firstname)}\n\nConfirm your e-mail address by opening this link within 24 hours:\n${issuer}/confirm-email?token=${token}\n\nIf you did not create an account, ignore this message.\n`,
  });
}

/**
 * E-mails a password-reset link if the address has an account, within the address's e-mail limit
 * (counted for unknown addresses too); says nothing either way. The link belongs to the account's
 * current reset generation: using any link of it ends the others.
 */
export async function requestPasswordReset({ users, links, mailLimits, mailer, issuer }: Uses<typeof PASSWORD_RESET_REQUEST_USES> & MailDeps, email: string): Promise<void> {
  if (!(await mailLimits.takeMailSlot(email))) return;
  const record = await users.findUserByEmail(email);
  if (!record) return;
  const token = await links.createLink('reset-password', record.user.id, new Date(), record.resetGeneration);
  await mailer.send({
    to: record.user.email,
    subject: 'Reset your password',
    text: `${greeting(record.user.firstname)}\n\nChoose a new password by opening this link within one hour:\n${issuer}/password-reset/confirm?token=${token}\n\nIf you did not ask for this, ignore this message: your password stays as it is.\n`,
  });
}

import { randomUUID } from 'node:crypto';
import { hashPassword } from '#shared/auth/password';
import { issuer, links, users } from '#shared/auth/runtime';
import { mailerFromEnv } from '#shared/email/mailer-from-env';
import { formatTimestamp } from '#shared/domain/time';
import { normalizeEmail, type User } from '#shared/domain/user';
import { ConflictError } from '#shared/errors';
import { countMetric, METRIC } from '#shared/metrics';

const mailer = mailerFromEnv();

/**
 * Creates the account with its confirmation link (one transaction) and sends the link. If the
 * address already has an account, its owner gets a notice instead — the caller's answer is the
 * same, so nothing is revealed.
 */
export async function signUp(form: Record<string, string>, now = new Date()): Promise<void> {
  const id = randomUUID();
  const stamp = formatTimestamp(now);
  const user: User = {
    id,
    firstname: form.firstname!.trim(),
    lastname: form.lastname!.trim(),
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
    await mailer.send({
      to: user.email,
      subject: 'Someone tried to create an account with your address',
      text: `Hello,\n\nSomeone tried to create an account with this e-mail address, which already has one.\nIf it was you, sign in at ${issuer}/login, or reset your password at ${issuer}/password-reset.\nIf it was not you, you can ignore this message.\n`,
    });
    return;
  }
  countMetric(METRIC.signUps);
  await mailConfirmation(user, link.token);
}

/** E-mails a fresh single-use confirmation link to the user. */
export async function sendConfirmation(user: User): Promise<void> {
  await mailConfirmation(user, await links.createLink('confirm-email', user.id));
}

async function mailConfirmation(user: User, token: string): Promise<void> {
  await mailer.send({
    to: user.email,
    subject: 'Confirm your e-mail address',
    text: `Hello ${user.firstname},\n\nConfirm your e-mail address by opening this link within 24 hours:\n${issuer}/confirm-email?token=${token}\n\nIf you did not create an account, ignore this message.\n`,
  });
}

/** E-mails a password-reset link if the address has an account; says nothing either way. */
export async function requestPasswordReset(email: string): Promise<void> {
  const record = await users.findUserByEmail(email);
  if (!record) return;
  const token = await links.createLink('reset-password', record.user.id);
  await mailer.send({
    to: record.user.email,
    subject: 'Reset your password',
    text: `Hello ${record.user.firstname},\n\nChoose a new password by opening this link within one hour:\n${issuer}/password-reset/confirm?token=${token}\n\nIf you did not ask for this, ignore this message: your password stays as it is.\n`,
  });
}

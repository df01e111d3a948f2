import type { SignInAlert } from '#shared/accounts/sign-in-alert';
import { createMailer, type MailSettings } from '#shared/email/create-mailer';
import { greeting } from '#shared/email/mail-text';

/**
 * E-mails a new-browser sign-in's alert: when (UTC), which browser (as its User-Agent names itself),
 * from which address, and the link to the security page's list of signed-in browsers, where it can
 * be signed out. Bundled on its own beside the sign-in functions (their `lazyModules`) and loaded on
 * first use (shared/runtime.ts sendSignInAlert): the SES client is needed only for a new browser,
 * not at every cold start.
 */
export async function mailSignInAlert(alert: SignInAlert, { issuer, mail }: { issuer: string; mail: MailSettings }): Promise<void> {
  await createMailer(mail).send({
    to: alert.to,
    subject: 'New sign-in to your account',
    text: `${greeting(alert.firstname)}\n\nYour account was just signed in to from a browser it had not used before:\n\n`
      + `  When: ${alert.at.slice(0, 19).replace('T', ' ')} UTC\n  Browser: ${alert.browser}\n  Address: ${alert.address}\n\n`
      + `If this was you, there is nothing to do. If not, sign that browser out and change your password now:\n${issuer}/account/security#sessions\n`,
  });
}

import type { Mailer } from '#shared/email/mailer';
import { createOutboxMailer } from '#shared/email/outbox-mailer';
import { sesMailerFrom } from '#shared/email/ses-mailer';

/** Where mail goes: the local outbox folder, or SES from a verified sender with the stack's configuration set. */
export type MailSettings = { outboxDir: string } | { sender: string; configurationSet?: string };

/**
 * The outbox when the settings name one (local), else SES. Imported statically (not with
 * `import()`), so esbuild keeps only the SES client and the one command it uses.
 */
export function createMailer(settings: MailSettings): Mailer {
  return 'outboxDir' in settings ? createOutboxMailer(settings.outboxDir) : sesMailerFrom(settings.sender, settings.configurationSet);
}

import { MAIL_ENV, optionalEnv, requireEnv } from '#shared/config';
import type { Mailer } from '#shared/email/mailer';
import { createOutboxMailer } from '#shared/email/outbox-mailer';
import { sesMailerFrom } from '#shared/email/ses-mailer';

/**
 * The outbox when OUTBOX_DIR is set (local), else SES from MAIL_FROM with the configuration set
 * MAIL_CONFIGURATION_SET. Imported statically (not with `import()`), so esbuild keeps only the SES
 * client and the one command it uses.
 */
export function mailerFromEnv(): Mailer {
  const outbox = optionalEnv(MAIL_ENV.outboxDir);
  return outbox ? createOutboxMailer(outbox) : sesMailerFrom(requireEnv(MAIL_ENV.sender), optionalEnv(MAIL_ENV.configurationSet));
}

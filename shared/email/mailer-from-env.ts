import { MAIL_ENV, optionalEnv, requireEnv } from '#shared/config';
import type { Mailer } from '#shared/email/mailer';

/** The outbox when OUTBOX_DIR is set (local), else SES from MAIL_FROM. Clients load on first use. */
export function mailerFromEnv(): Mailer {
  const outbox = optionalEnv(MAIL_ENV.outboxDir);
  let mailer: Promise<Mailer> | undefined;
  const load = async (): Promise<Mailer> => {
    if (outbox) return (await import('#shared/email/outbox-mailer')).createOutboxMailer(outbox);
    return (await import('#shared/email/ses-mailer')).sesMailerFrom(requireEnv(MAIL_ENV.sender));
  };
  return { send: async (message) => (await (mailer ??= load())).send(message) };
}

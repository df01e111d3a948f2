import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import type { Mailer } from '#shared/email/mailer';

/** SES delivery with a client configured from the Lambda environment. */
export function sesMailerFrom(from: string): Mailer {
  return createSesMailer(new SESv2Client({}), from);
}

/** Delivery through Amazon SES from a verified sender address. */
export function createSesMailer(ses: Pick<SESv2Client, 'send'>, from: string): Mailer {
  return {
    async send({ to, subject, text }) {
      await ses.send(new SendEmailCommand({
        FromEmailAddress: from,
        Destination: { ToAddresses: [to] },
        Content: { Simple: { Subject: { Data: subject, Charset: 'UTF-8' }, Body: { Text: { Data: text, Charset: 'UTF-8' } } } },
      }));
    },
  };
}

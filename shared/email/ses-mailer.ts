import { SendEmailCommand, SESClient } from '@aws-sdk/client-ses';
import { awsClientConfig, observeClient } from '#shared/aws/client-config';
import type { Mailer } from '#shared/email/mailer';

// The SES v1 client: the same SendEmail as v2 for plain-text mail, and ~36 KiB less in each
// bundle that sends mail (see bench/RESULTS.md).

/** SES delivery with a client configured from the Lambda environment. */
export function sesMailerFrom(from: string): Mailer {
  return createSesMailer(observeClient(new SESClient(awsClientConfig())), from);
}

/** Delivery through Amazon SES from a verified sender address. */
export function createSesMailer(ses: Pick<SESClient, 'send'>, from: string): Mailer {
  return {
    async send({ to, subject, text }) {
      await ses.send(new SendEmailCommand({
        Source: from,
        Destination: { ToAddresses: [to] },
        Message: { Subject: { Data: subject, Charset: 'UTF-8' }, Body: { Text: { Data: text, Charset: 'UTF-8' } } },
      }));
    },
  };
}

import { SendEmailCommand, SESClient } from '@aws-sdk/client-ses';
import { awsClientConfig, observeClient } from '#shared/aws/client-config';
import type { Mailer } from '#shared/email/mailer';
import { countMetric, METRIC } from '#shared/metrics';

// The SES v1 client: the same SendEmail as v2 for plain-text mail, and ~36 KiB less in each
// bundle that sends mail (see bench/RESULTS.md).

/** SES delivery with a client configured from the Lambda environment. */
export function sesMailerFrom(from: string, configurationSet?: string): Mailer {
  return createSesMailer(observeClient(new SESClient(awsClientConfig())), from, configurationSet);
}

/**
 * Delivery through Amazon SES from a verified sender address, with the stack's configuration set:
 * SES publishes each message's sends, deliveries, bounces and complaints as metrics through it, and
 * its suppression options keep SES from sending again to an address that bounced or complained.
 */
export function createSesMailer(ses: Pick<SESClient, 'send'>, from: string, configurationSet?: string): Mailer {
  return {
    async send({ to, subject, text }) {
      await ses.send(new SendEmailCommand({
        Source: from,
        Destination: { ToAddresses: [to] },
        Message: { Subject: { Data: subject, Charset: 'UTF-8' }, Body: { Text: { Data: text, Charset: 'UTF-8' } } },
        ...(configurationSet ? { ConfigurationSetName: configurationSet } : {}),
      }));
      countMetric(METRIC.emailsSent);
    },
  };
}

import { Webhook } from 'standardwebhooks';
import type { WebhookSecret } from '#shared/domain/webhook';

/** The headers of one signed delivery (Standard Webhooks). */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs a delivery with every given secret (current and, during a rotation's overlap, previous):
 * `webhook-signature` lists one `v1,<base64>` per secret, space-separated, so a receiver that
 * knows either secret accepts it. `timestamp` is the attempt's time; `body` the exact bytes sent.
 */
export function signWithSecrets(secrets: readonly (string | WebhookSecret)[], webhookId: string, timestamp: Date, body: string): SignedHeaders {
  if (secrets.length === 0) throw new Error('A webhook delivery needs at least one signing secret.');
  const signatures = secrets.map((s) => new Webhook(typeof s === 'string' ? s : s.secret).sign(webhookId, timestamp, body));
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

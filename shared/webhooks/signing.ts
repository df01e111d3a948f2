import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** One signing secret of a subscription; `retiresAt` (epoch seconds) is set on the previous one during a rotation's overlap. */
export interface WebhookSecret {
  secret: string;
  createdAt: number;
  retiresAt?: number;
}

/** The headers of one signed delivery (Standard Webhooks). */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** A new signing secret, `whsec_` and 32 random bytes in base64, the form Standard Webhooks verifiers take. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The secrets that sign at `now`: all but those past their `retiresAt`. */
export function liveSecrets(secrets: readonly WebhookSecret[], now: Date): WebhookSecret[] {
  const seconds = Math.floor(now.getTime() / 1000);
  return secrets.filter((s) => s.retiresAt === undefined || s.retiresAt > seconds);
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

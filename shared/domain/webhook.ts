import { createHash, randomBytes } from 'node:crypto';

// What a webhook is, for the repository that stores subscriptions and deliveries (shared/data/) and
// the pipeline that makes and sends events (shared/webhooks/): the event types, the `webhook-id`,
// and a subscription's signing secrets. Apart from the signing (shared/webhooks/signing.ts), so that
// the console's functions, which make secrets but never sign, do not bundle the signing library.

/** Every event type a webhook receives; the OpenAPI document's `webhooks` section lists each one. */
export const WEBHOOK_EVENT_TYPES = [
  'device.updated',
  'device.connection_changed',
  'device.added',
  'device.removed',
  'grant.revoked',
  'grant.updated',
  'webhook.test',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * A `webhook-id`: `msg_`, the creation time (milliseconds, base 36, 9 characters: sortable, and
 * how the delivery item is found from the id alone), `_`, then 20 characters that identify it.
 * `seed` makes it deterministic (the stream record and the application: a record read twice makes
 * the same ids); without it, the rest is random.
 */
export function newWebhookId(at: Date, seed?: string): string {
  const time = at.getTime().toString(36).padStart(9, '0');
  const rest = seed === undefined
    ? createHash('sha256').update(crypto.randomUUID()).digest('hex').slice(0, 20)
    : createHash('sha256').update(seed).digest('hex').slice(0, 20);
  return `msg_${time}_${rest}`;
}

/** The creation time a webhook id carries, or undefined for a string that is not one. */
export function webhookIdTime(webhookId: string): Date | undefined {
  const match = /^msg_([0-9a-z]{9})_[0-9a-f]{20}$/.exec(webhookId);
  if (!match) return undefined;
  const ms = parseInt(match[1]!, 36);
  return Number.isSafeInteger(ms) ? new Date(ms) : undefined;
}

/** One signing secret of a subscription; `retiresAt` (epoch seconds) is set on the previous one during a rotation's overlap. */
export interface WebhookSecret {
  secret: string;
  createdAt: number;
  retiresAt?: number;
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
 * How long the previous webhook signing secret keeps signing after a rotation: both secrets sign
 * every delivery meanwhile, so a receiver can switch at leisure (Standard Webhooks verifiers accept
 * any one matching signature).
 */
export const WEBHOOK_SECRET_OVERLAP_SECONDS = 24 * 60 * 60;

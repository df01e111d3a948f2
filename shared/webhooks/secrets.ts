// A subscription's signing secrets: made and chosen here, used by signing.ts. Apart from it so that
// the console's functions, which make secrets but never sign, do not bundle the signing library.
import { randomBytes } from 'node:crypto';

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

import { ENV, optionalEnv, requireEnv } from '#shared/config';
import { createBatchReader } from '#shared/data/batch-read';
import { createClientRepo } from '#shared/data/client-repo';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createLinkRepo } from '#shared/data/link-repo';
import { createSessionRepo } from '#shared/data/session-repo';
import { createThrottleRepo } from '#shared/data/throttle-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';

// The authorization server's singletons, built once per process at module load, with no I/O.
// Only what every auth function needs is here: the token signer (token-runtime.ts) and the mailer
// (accounts.ts) are imported by the functions that use them, so the others do not bundle their SDKs.
export const table = requireEnv(ENV.tableName);
export const issuer = requireEnv(ENV.issuer);
export const audience = requireEnv(ENV.audience);

export const doc = createDocumentClient({ endpoint: optionalEnv(ENV.dynamodbEndpoint) });
export const batch = createBatchReader({ doc, table });
export const users = createUserRepo({ doc, table });
export const clients = createClientRepo({ doc, table });
export const grants = createGrantRepo({ doc, table });
export const sessions = createSessionRepo({ doc, table });
export const throttle = createThrottleRepo({ doc, table });
export const links = createLinkRepo({ doc, table });
/** Webhook subscriptions and deliveries (the developer console; the pipeline has its own, shared/webhooks/runtime.ts). */
export const webhooks = createWebhookRepo({ doc, table });

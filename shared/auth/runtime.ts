import { ENV, optionalEnv, requireEnv } from '#shared/config';
import { createBatchReader } from '#shared/data/batch-read';
import { createClientRepo } from '#shared/data/client-repo';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createLinkRepo } from '#shared/data/link-repo';
import { createMailLimitRepo } from '#shared/data/mail-limit-repo';
import { createSessionRepo } from '#shared/data/session-repo';
import { createThrottleRepo } from '#shared/data/throttle-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';

// The authorization server's singletons, built once per process at module load, with no I/O.
// Only what every auth function needs is here: the token signer (token-runtime.ts) and the mailer
// (accounts.ts) are imported by the functions that use them, so the others do not bundle their SDKs.
// Each repository is marked pure (it only builds closures), so esbuild leaves out of a function's
// bundle every repository that function does not use (test/infra/bundling.test.ts).
export const table = requireEnv(ENV.tableName);
export const issuer = requireEnv(ENV.issuer);
export const audience = requireEnv(ENV.audience);

export const doc = createDocumentClient({ endpoint: optionalEnv(ENV.dynamodbEndpoint) });
export const batch = /* @__PURE__ */ createBatchReader({ doc, table });
export const users = /* @__PURE__ */ createUserRepo({ doc, table });
export const clients = /* @__PURE__ */ createClientRepo({ doc, table });
export const grants = /* @__PURE__ */ createGrantRepo({ doc, table });
export const sessions = /* @__PURE__ */ createSessionRepo({ doc, table });
export const throttle = /* @__PURE__ */ createThrottleRepo({ doc, table });
export const links = /* @__PURE__ */ createLinkRepo({ doc, table });
export const mailLimits = /* @__PURE__ */ createMailLimitRepo({ doc, table });
/** Webhook subscriptions and deliveries (the developer console; the pipeline has its own, shared/webhooks/runtime.ts). */
export const webhooks = /* @__PURE__ */ createWebhookRepo({ doc, table });

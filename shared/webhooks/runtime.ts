import { ENV, optionalEnv, requireEnv, WEBHOOK_ENV } from '#shared/config';
import { createBatchReader } from '#shared/data/batch-read';
import { createClientRepo } from '#shared/data/client-repo';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { createWebhookRepo, type WebhookSubscription } from '#shared/data/webhook-repo';
import { webhookQueueFromEnv } from '#shared/webhooks/queue';

// The webhook functions' singletons, built once per process at module load, with no I/O.
const table = requireEnv(ENV.tableName);
export const doc = createDocumentClient({ endpoint: optionalEnv(ENV.dynamodbEndpoint) });
export const batch = /* @__PURE__ */ createBatchReader({ doc, table });
export const grants = /* @__PURE__ */ createGrantRepo({ doc, table });
export const webhooks = /* @__PURE__ */ createWebhookRepo({ doc, table });
export const queue = webhookQueueFromEnv();
/** Only the local service sets it: its receivers are on http://localhost. */
export const allowLocalHttp = optionalEnv(WEBHOOK_ENV.allowLocalHttp) === 'true';

const clients = /* @__PURE__ */ createClientRepo({ doc, table });
const users = /* @__PURE__ */ createUserRepo({ doc, table });

// From source (tests, the local service) the notice is this file's neighbour; bundled, it is
// disabled-notice.mjs beside the bundle. The computed specifier keeps esbuild from bundling it.
const NOTICE_URL = new URL(import.meta.url.endsWith('.ts') ? './disabled-notice.ts' : './disabled-notice.mjs', import.meta.url).href;

/** E-mails the developer of an application whose webhook was disabled (disabled-notice.ts, loaded on first use). */
export async function notifyDisabled(subscription: WebhookSubscription): Promise<void> {
  const { sendDisabledNotice } = (await import(NOTICE_URL)) as typeof import('#shared/webhooks/disabled-notice');
  await sendDisabledNotice(subscription, { clients, users });
}

import { ENV, optionalEnv, requireEnv, WEBHOOK_ENV } from '#shared/config';
import { createBatchReader } from '#shared/data/batch-read';
import { createClientRepo } from '#shared/data/client-repo';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { createWebhookRepo, type WebhookSubscription } from '#shared/data/webhook-repo';
import { mailerFromEnv } from '#shared/email/mailer-from-env';
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

/** E-mails the developer of an application whose webhook was disabled (GetItem application, GetItem user, one message). */
export async function notifyDisabled(subscription: WebhookSubscription): Promise<void> {
  const client = await clients.getClient(subscription.clientId);
  const developer = client && (await users.getUserById(client.developerId));
  if (!client || !developer) return;
  await mailerFromEnv().send({
    to: developer.email,
    subject: `Webhook of ${client.name} disabled`,
    text: `Hello ${developer.firstname},\n\nThe webhook of your application "${client.name}" (${subscription.url}) has failed every delivery since ${subscription.failingSince ?? 'several days'}, so we stopped sending events to it.\nFix the receiver, then save its URL again in the developer console (${requireEnv(ENV.issuer)}/developer/apps/${client.clientId}) to turn it back on. Events sent in between are not delivered again.\n`,
  });
}

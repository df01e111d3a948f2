import { createDocumentClient } from '#shared/data/dynamodb';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import type { ExampleApp } from '#local/example-app';

/**
 * Subscribes the example application to its application's webhook events, as its developer would in
 * the console: its URL, and the signing secret handed to it. A subscription kept from an earlier run
 * (a data folder) gets a new secret, since the one shown then is gone; the old one stops at once.
 */
export async function subscribeExampleApp(app: ExampleApp, target: { dynamodbEndpoint: string; tableName: string; clientId: string }): Promise<void> {
  const doc = createDocumentClient({ endpoint: target.dynamodbEndpoint });
  try {
    const webhooks = createWebhookRepo({ doc, table: target.tableName });
    const { secret } = await webhooks.setUrl(target.clientId, app.webhookUrl);
    app.useWebhookSecret(secret ?? (await webhooks.rotateSecret(target.clientId, 0)));
  } finally {
    doc.destroy();
  }
}

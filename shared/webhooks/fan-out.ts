import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { BatchReader } from '#shared/data/batch-read';
import { deviceVisible } from '#shared/domain/grant';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import { newWebhookId } from '#shared/domain/webhook';
import { changeToEvents, scopesCover, type ChangeRecord, type TableChange } from '#shared/webhooks/events';
import type { WebhookMessage, WebhookQueue } from '#shared/webhooks/queue';

/** A DynamoDB stream record in the form Lambda hands it to a function (images in the attribute-value form). */
export interface StreamRecordLike {
  eventID?: string;
  eventName?: string;
  dynamodb?: {
    /** Epoch seconds, as Lambda hands it (the replay converts the SDK's Date). */
    ApproximateCreationDateTime?: number;
    NewImage?: Record<string, unknown>;
    OldImage?: Record<string, unknown>;
  };
}

/** A stream record in the form `changeToEvents` takes, or undefined for one it cannot read. */
export function toChangeRecord(record: StreamRecordLike): ChangeRecord | undefined {
  const { eventID, eventName, dynamodb } = record;
  if (!eventID || !dynamodb || (eventName !== 'INSERT' && eventName !== 'MODIFY' && eventName !== 'REMOVE')) return undefined;
  const time = dynamodb.ApproximateCreationDateTime;
  const at = time === undefined ? new Date() : new Date(time * 1000);
  const image = (value: Record<string, unknown> | undefined) => (value ? unmarshall(value as Record<string, AttributeValue>) : undefined);
  return { eventId: eventID, eventName, at, newImage: image(dynamodb.NewImage), oldImage: image(dynamodb.OldImage) };
}

/** The repository operations fanOut uses (its function's grants: functions/needs.ts). */
export const FAN_OUT_USES = { grants: ['listConsentsByUser'], webhooks: ['subscriptionsRead', 'createEventDelivery'] } as const satisfies UsesDeclaration;

export interface FanOutDeps extends Uses<typeof FAN_OUT_USES> {
  batch: Pick<BatchReader, 'read'>;
  queue: WebhookQueue;
  now?: () => Date;
}

/**
 * Turns table changes into deliveries: for each change with events, the applications concerned
 * (device events: every application holding a consent from the device's owner that covers
 * `read_device` and shares the device, found with one Query of the owner's consents; grant events:
 * that application),
 * those with a live webhook (one BatchGetItem of their subscriptions), and for each event and
 * application one delivery item (TTL 30 days; one TransactWriteItems: written only while the owner's
 * consent, for a device event, or the application's webhook, for a grant event, still exists, else
 * neither item nor message) and one queue message. Webhook ids derive
 * from the stream record, so a batch read again (after a failure) makes the same ids, and an
 * existing delivery is not written again. Returns the number of deliveries queued.
 */
export async function fanOut(records: readonly StreamRecordLike[], deps: FanOutDeps): Promise<number> {
  const { grants, webhooks, batch, queue, now = () => new Date() } = deps;
  const changes = records.map(toChangeRecord).flatMap((r) => (r ? [changeToEvents(r)] : [])).filter((c): c is TableChange => c !== undefined);
  if (changes.length === 0) return 0;

  // One Query per owner with device changes in this batch, not per change.
  const consentsByOwner = new Map<string, Promise<Awaited<ReturnType<FanOutDeps['grants']['listConsentsByUser']>>>>();
  const targets = await Promise.all(changes.map(async (change) => {
    if (change.kind === 'grant') return change.events.map((event) => ({ change, event, clientIds: [change.clientId] }));
    let consents = consentsByOwner.get(change.ownerId);
    if (!consents) consentsByOwner.set(change.ownerId, (consents = grants.listConsentsByUser(change.ownerId)));
    const held = await consents;
    return change.events.map((event) => ({
      // Only the applications whose device choice shares the device hear of it.
      // A freed device's removal goes to the applications that saw it before the consents dropped it.
      change, event, clientIds: held.filter((c) => scopesCover(event.type, c.scopes)
        && (change.seenBy ? change.seenBy.includes(c.clientId) : deviceVisible(c, change.deviceId))).map((c) => c.clientId),
    }));
  }));
  const flat = targets.flat();
  const clientIds = [...new Set(flat.flatMap((t) => t.clientIds))];
  if (clientIds.length === 0) return 0;
  const [subscriptions] = await batch.read([webhooks.subscriptionsRead(clientIds)]);
  const live = new Set(clientIds.filter((id, i) => subscriptions[i] !== undefined && subscriptions[i]!.disabledAt === undefined));

  const messages: WebhookMessage[] = [];
  const at = now();
  await Promise.all(flat.flatMap(({ change, event, clientIds: ids }) => ids.filter((id) => live.has(id)).map(async (clientId) => {
    const webhookId = newWebhookId(new Date(event.timestamp), `${change.sourceId}/${clientId}/${event.type}`);
    const userId = change.ownerId;
    // Written only while the consent (device event) or the webhook (grant event) still exists: a
    // deletion between the read above and this write leaves nothing naming its user behind.
    const guard = change.kind === 'device' ? 'consent' : 'webhook';
    const written = await webhooks.createEventDelivery({ clientId, webhookId, eventType: event.type, payload: JSON.stringify(event), userId }, guard, at);
    if (written === 'gone') return;
    // A device event is delivered only while the owner's grant stands: the delivery checks it again.
    messages.push(change.kind === 'device' ? { clientId, webhookId, userId } : { clientId, webhookId });
  })));
  await queue.send(messages);
  return messages.length;
}

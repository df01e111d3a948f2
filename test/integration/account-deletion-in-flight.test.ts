import { randomUUID } from 'node:crypto';
import { GetCommand, ScanCommand } from '#shared/data/commands';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { deleteAccount, type DeletionDeps } from '#shared/accounts/account-deletion';
import { hashPassword } from '#shared/accounts/password';
import { createBatchReader } from '#shared/data/batch-read';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createErasureRepo, type ErasureRepo } from '#shared/data/erasure-repo';
import { consentKey, deviceKey } from '#shared/data/item-keys';
import { createSessionRepo } from '#shared/data/session-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { formatTimestamp } from '#shared/domain/time';
import type { User } from '#shared/domain/user';
import { fanOut, type StreamRecordLike } from '#shared/webhooks/fan-out';
import type { WebhookMessage } from '#shared/webhooks/queue';
import { makeDevice } from '../support/factories';
import { clients, current, doc, grants, tokenClient, table, useTokenService } from '../support/token-service';

// An account's deletion while the webhook fan-out is between its reads (the owner's consents, the
// applications' webhooks) and its write of a delivery: after the deletion returned, no item naming
// the user may appear, whatever the fan-out read before it.

describe('account deletion with a webhook fan-out in flight', () => {
  useTokenService();
  const HASH = hashPassword('the-password-of-the-account');

  /** A developer with a device, one application of their own (authorized by them, with a webhook), and a consent to another developer's application with a webhook. */
  async function developer() {
    const repos = { doc, table };
    const stamp = formatTimestamp(current);
    const id = randomUUID();
    const user: User = {
      id, firstname: 'Ada', lastname: 'Lovelace', avatar_url: `/avatars/${id}.png`, gender: 0, email: `ada-${id}@example.com`,
      email_confirmed: true, creation_date: stamp, update_date: stamp,
    };
    await createUserRepo(repos).createUser(user, await HASH);
    const device = makeDevice({ id: randomUUID() });
    await createDeviceRepo(repos).createDevice(user.id, device);
    const own = tokenClient({ developerId: user.id, developerName: 'Ada Lovelace' });
    const other = tokenClient();
    const webhooks = createWebhookRepo(repos);
    for (const app of [own, other]) {
      await clients.createClient(app);
      await grants.saveConsent({ userId: user.id, clientId: app.clientId, scopes: ['read_user', 'read_device'], grantedAt: stamp });
      await webhooks.setUrl(app.clientId, 'https://hooks.example/receiver');
    }
    return { user, device, own, other };
  }

  const itemOf = async (key: { pk: string; sk: string }) =>
    (await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item!;

  /** A stream record as Lambda hands it over: images in the attribute-value form. */
  const streamRecord = (eventName: 'MODIFY' | 'REMOVE', oldImage: Record<string, unknown>, newImage?: Record<string, unknown>): StreamRecordLike => ({
    eventID: randomUUID(), eventName,
    dynamodb: { ApproximateCreationDateTime: current.getTime() / 1000, OldImage: marshall(oldImage), ...(newImage ? { NewImage: marshall(newImage) } : {}) },
  });

  /** The fan-out of `records`, stopped after its reads until `resume()`: `read` settles once it has read. */
  function pausedFanOut(records: StreamRecordLike[]) {
    const queued: WebhookMessage[] = [];
    let resume!: () => void;
    let readDone!: () => void;
    const gate = new Promise<void>((r) => { resume = r; });
    const read = new Promise<void>((r) => { readDone = r; });
    const batch = createBatchReader({ doc, table });
    const run = fanOut(records, {
      grants, webhooks: createWebhookRepo({ doc, table }), now: () => current,
      batch: { read: async (reads) => { const answer = await batch.read(reads); readDone(); await gate; return answer; } },
      queue: { send: async (messages) => void queued.push(...messages), retryAfter: async () => undefined },
    });
    return { read, resume, run, queued };
  }

  function deps(erasure: ErasureRepo = createErasureRepo({ doc, table })): DeletionDeps {
    return {
      erasure, grants, clients, webhooks: createWebhookRepo({ doc, table }), sessions: createSessionRepo({ doc, table }),
      mailer: { send: async () => undefined }, issuer: 'https://auth.example.test', now: () => current,
    };
  }

  /** Every item that names the user anywhere: in a key, an attribute, a payload. */
  async function itemsNaming(user: User) {
    const { Items = [] } = await doc.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
    return Items.filter((item) => JSON.stringify(item).includes(user.id) || JSON.stringify(item).includes(user.email));
  }

  it('a device change read before the deletion and written after it leaves no delivery naming the deleted user, and queues nothing', async () => {
    const { user, device } = await developer();
    const before = await itemOf(deviceKey(user.id, device.id));
    const fan = pausedFanOut([streamRecord('MODIFY', before, { ...before, name: 'Renamed', seq: Number(before.seq) + 1 })]);
    await fan.read;

    expect(await deleteAccount(deps(), user.id)).toBe('deleted');
    fan.resume();

    expect(await fan.run).toBe(0);
    expect(fan.queued).toEqual([]);
    expect(await itemsNaming(user)).toEqual([]);
  });

  it('the developer’s own application told of the deletion’s end of its grant, read before the deletion and written after it, leaves no delivery', async () => {
    const { user, own } = await developer();
    // What the deletion's grants step removes: the consent, marked with its reason.
    const consent = { ...await itemOf(consentKey(user.id, own.clientId)), endedReason: 'account_deleted' };
    const fan = pausedFanOut([streamRecord('REMOVE', consent)]);
    await fan.read;

    expect(await deleteAccount(deps(), user.id)).toBe('deleted');
    fan.resume();

    expect(await fan.run).toBe(0);
    expect(await itemsNaming(user)).toEqual([]);
  });

  it('a delivery to the developer’s own application landing after the deletion listed that application’s deliveries is not written', async () => {
    const { user, own } = await developer();
    const consent = { ...await itemOf(consentKey(user.id, own.clientId)), endedReason: 'account_deleted' };
    const fan = pausedFanOut([streamRecord('REMOVE', consent)]);
    await fan.read;
    // The fan-out writes right after the deletion's Query of the application's deliveries.
    const erasure = createErasureRepo({ doc, table });
    const listed: ErasureRepo = {
      ...erasure,
      deliveryKeysOf: async (clientId) => {
        const keys = await erasure.deliveryKeysOf(clientId);
        fan.resume();
        await fan.run;
        return keys;
      },
    };

    expect(await deleteAccount(deps(listed), user.id)).toBe('deleted');

    expect(await fan.run).toBe(0);
    expect(await itemsNaming(user)).toEqual([]);
  });

  it('without a deletion, the same fan-out writes and queues the delivery of each application (the guards stand)', async () => {
    const { user, device, own, other } = await developer();
    const before = await itemOf(deviceKey(user.id, device.id));
    const fan = pausedFanOut([streamRecord('MODIFY', before, { ...before, name: 'Renamed', seq: Number(before.seq) + 1 })]);
    fan.resume();

    expect(await fan.run).toBe(2);
    expect(fan.queued.map((m) => m.clientId).sort()).toEqual([own.clientId, other.clientId].sort());
    const deliveries = await Promise.all(fan.queued.map((m) => createWebhookRepo({ doc, table }).getDelivery(m.clientId, m.webhookId)));
    expect(deliveries.map((d) => [d?.eventType, d?.userId])).toEqual([['device.updated', user.id], ['device.updated', user.id]]);
  });

  it('refuses a consent-guarded delivery that names no user, writing nothing', async () => {
    const { own } = await developer();
    const webhooks = createWebhookRepo({ doc, table });
    const webhookId = 'msg_000000001_00000000000000000000';

    const refused = webhooks.createEventDelivery({ clientId: own.clientId, webhookId, eventType: 'device.updated', payload: '{}' }, 'consent', current);

    await expect(refused).rejects.toThrow('A delivery guarded by a consent names its user');
    expect(await webhooks.listDeliveries(own.clientId)).toEqual([]);
  });
});

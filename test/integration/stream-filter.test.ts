import { randomUUID } from 'node:crypto';
import type { DynamoDBRecord } from 'aws-lambda';
import { DeleteCommand } from '#shared/data/commands';
import type { DocumentClient } from '#shared/data/document-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAuthorizationCode } from '#shared/oauth/grant-tokens';
import { hashSecret, randomToken } from '#shared/secrets';
import { createDeviceRepo } from '#shared/data/device-repo';
import { deviceKey } from '#shared/data/item-keys';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { changeToEvents, testEvent } from '#shared/webhooks/events';
import { newWebhookId } from '#shared/domain/webhook';
import { toChangeRecord } from '#shared/webhooks/fan-out';
import { matchesFilters, type FilterPattern } from '#shared/webhooks/stream-filter';
import { DeviceUserServiceStack } from '#infra/stack';
import { startStreamReader, type StreamReader } from '#local/stream-reader';
import { removeTestApps, testApp } from '../support/cdk-app';
import { makeDevice } from '../support/factories';
import { createRepos } from '../support/repos';
import { freshTable } from '../support/service';
import { deployedTemplate } from '../support/deployed-form';

// The fan-out's event source mapping filters the table's stream (Lambda event filtering). Here the
// filters are the template's own, and the records are real: the service's repositories write a
// user's life (sign-in, throttled login, mail, links, an authorization, token rotations and
// revocations, devices, webhook deliveries) to DynamoDB Local, whose stream hands them over as
// Lambda would. What passes must be exactly what `changeToEvents` turns into events, but for the
// one kind the filters cannot tell apart (a family revoked with its consent).

const PASSWORD_HASH = 'scrypt$32768$8$1$c2FsdA$aGFzaA';

afterAll(removeTestApps);

/** The fan-out's filters as deployed: the patterns of its event source mapping in the template. */
function templateFilters(): FilterPattern[] {
  const app = testApp({ mailFrom: 'no-reply@mail.stack-test.invalid' });
  const resources = deployedTemplate(new DeviceUserServiceStack(app, 'Filtered')).Resources as Record<string, { Type: string; Properties: any }>;
  const fanOutId = Object.entries(resources).find(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.includes('FanOutEvents'))![0];
  const mapping = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.FunctionName.Ref === fanOutId)!;
  return (mapping.Properties.FilterCriteria?.Filters ?? []).map((f: { Pattern: string }) => JSON.parse(f.Pattern) as FilterPattern);
}

const hasEvents = (record: DynamoDBRecord) => {
  const change = toChangeRecord(record);
  return change !== undefined && changeToEvents(change) !== undefined;
};
const label = (record: DynamoDBRecord) => `${record.eventName} ${record.dynamodb?.Keys?.pk?.S?.replace(/#.*/, '#')} ${record.dynamodb?.Keys?.sk?.S?.replace(/#.*/, '#')}`;

describe('the fan-out’s stream filters, on the records a user’s life writes', () => {
  let doc: DocumentClient;
  let filters: FilterPattern[];
  const all: DynamoDBRecord[] = [];
  const handedOver: DynamoDBRecord[] = [];
  const readers: StreamReader[] = [];
  const userId = randomUUID();
  const clientId = `app-${randomUUID()}`;
  let unusedCodeRevoked: string;
  let userRevokedFamily: string;

  beforeAll(async () => {
    filters = templateFilters();
    const fresh = await freshTable();
    doc = fresh.doc;
    const deps = { doc, table: fresh.table };
    // Every record, and what the local service's reader hands the fan-out with the same filters.
    readers.push(await startStreamReader({ endpoint: fresh.endpoint, tableName: fresh.table, handle: async (r) => void all.push(...r), pollMs: 10 }));
    readers.push(await startStreamReader({ endpoint: fresh.endpoint, tableName: fresh.table, filters, handle: async (r) => void handedOver.push(...r), pollMs: 10 }));

    const { users, clients, grants, links, mailLimits, sessions, throttle } = createRepos(deps);
    const devices = createDeviceRepo(deps);
    const webhooks = createWebhookRepo(deps);
    const now = Date.now();
    const email = `sam-${userId}@example.com`;
    await users.createUser({
      id: userId, firstname: 'Sam', lastname: 'Stream', avatar_url: `/avatars/${userId}.png`, gender: 1, email, email_confirmed: true,
      creation_date: '2026-01-02T03:04:05.678', update_date: '2026-01-02T03:04:05.678',
    }, PASSWORD_HASH);
    await mailLimits.takeMailSlot(email);
    await links.createLink('confirm-email', userId);
    // A failed login: its throttle records.
    const records = await throttle.getRecords(email, '203.0.113.9', now);
    expect((await throttle.reserve(records.map((record) => ({ record, freeAttempts: 5, nextAttemptAt: now })), now)).reserved).toBe(true);
    const sessionId = await sessions.createSession(userId);
    await clients.createClient({
      clientId, secretHash: hashSecret(randomToken()), name: 'Stream test', description: 'Reads devices', website: 'https://app.example',
      redirectUris: ['https://app.example/callback'], developerId: randomUUID(), developerName: 'Dev', createdAt: '2026-01-02T03:04:05.678',
    });
    await webhooks.setUrl(clientId, 'https://hooks.example/in');

    // An authorization: consent, code, its redemption (the family), two rotations.
    const grantGeneration = randomUUID();
    await grants.saveConsent({ userId, clientId, scopes: ['read_user', 'read_device'], grantedAt: '2026-01-02T03:04:05.678', grantGeneration });
    const issue = async () => {
      const { stored } = newAuthorizationCode({
        clientId, userId, redirectUri: 'https://app.example/callback', scopes: ['read_device'], expiresAt: Math.floor(now / 1000) + 60, grantGeneration,
      });
      await grants.createCode(stored);
      return stored;
    };
    const redeem = async () => {
      const stored = await issue();
      await grants.redeemCode(stored.familyId, stored.codeHash, hashSecret('first'), new Date(now));
      return stored.familyId;
    };
    const familyId = await redeem();
    await grants.rotateRefreshToken(familyId, hashSecret('first'), hashSecret('second'), 'sealed', now);
    await grants.rotateRefreshToken(familyId, hashSecret('second'), hashSecret('third'), 'sealed', now + 1000);
    // A device's life.
    const device = makeDevice();
    await devices.createDevice(userId, device);
    await devices.updateOwnedDevice(userId, device.id, { name: 'Kitchen' });
    await devices.setConnection(userId, device.id, !device.connected, '2026-01-02T03:04:07.000Z');
    // A delivery and its attempt.
    const at = new Date();
    const webhookId = newWebhookId(at);
    await webhooks.createDelivery({ clientId, webhookId, eventType: 'webhook.test', payload: JSON.stringify(testEvent(clientId, at)) }, at);
    await webhooks.recordAttempt(clientId, webhookId, { status: 'delivered', at, statusCode: 204, latencyMs: 12 });
    // The grant's ends: a reuse revokes the family, the user revokes the application (the consent
    // removed, then its other family revoked with it), the device removed.
    await grants.revokeFamily(familyId, new Date(), 'refresh_token_reuse');
    userRevokedFamily = await redeem();
    const unusedCode = await issue();
    await grants.deleteConsent(userId, clientId);
    await grants.revokeFamily(userRevokedFamily, new Date(), 'user_revoked');
    await grants.revokeFamily(unusedCode.familyId, new Date(), 'user_revoked');
    unusedCodeRevoked = unusedCode.familyId;
    await doc.send(new DeleteCommand({ TableName: fresh.table, Key: deviceKey(userId, device.id) }));
    await sessions.deleteSession(sessionId);

    for (const reader of readers) await reader.caughtUp();
  }, 120_000);
  afterAll(async () => {
    for (const reader of readers) await reader.stop();
    doc?.destroy();
  });

  it('reads every kind of record the service writes (the test means something)', () => {
    const kinds = new Set(all.map((r) => r.dynamodb?.Keys?.pk?.S?.replace(/#.*/, '')));
    expect(kinds).toEqual(new Set(['USER', 'EMAIL', 'MAILLIMIT', 'LINK', 'THROTTLE', 'SESSION', 'CLIENT', 'FAMILY', 'DELIVERIES']));
  });

  it('passes every record that makes events, and drops every other but a family revoked with its consent', () => {
    const passed = all.filter((record) => matchesFilters(filters, record));
    const withEvents = all.filter(hasEvents);
    expect(withEvents.map(label)).toEqual([
      'INSERT USER# DEVICE#', 'MODIFY USER# DEVICE#', 'MODIFY USER# DEVICE#', 'MODIFY FAMILY# FAMILY', 'REMOVE USER# CONSENT#', 'REMOVE USER# DEVICE#',
    ]);
    expect(passed.filter((r) => !hasEvents(r)).map((r) => r.dynamodb?.Keys?.pk?.S)).toEqual([`FAMILY#${userRevokedFamily}`]);
    expect(withEvents.filter((r) => !passed.includes(r)).map(label)).toEqual([]);
    // Sessions, throttle records, mail counts, links, deliveries, consents given, codes (a family's
    // first state: issued, exchanged, or revoked unused), rotations: none invokes the fan-out.
    const dropped = all.filter((r) => !passed.includes(r)).map(label);
    for (const kind of ['SESSION#', 'THROTTLE#', 'MAILLIMIT#', 'LINK#', 'DELIVERIES#']) expect(dropped.some((l) => l.includes(` ${kind} `))).toBe(true);
    expect(dropped).toEqual(expect.arrayContaining(['INSERT USER# CONSENT#', 'INSERT FAMILY# FAMILY', 'MODIFY FAMILY# FAMILY']));
    expect(all.filter((r) => r.dynamodb?.Keys?.pk?.S === `FAMILY#${unusedCodeRevoked}`).map((r) => [label(r), passed.includes(r)])).toEqual([
      ['INSERT FAMILY# FAMILY', false], ['MODIFY FAMILY# FAMILY', false],
    ]);
  });

  it('needs each of its patterns: without any one of them, a record that makes events is dropped', () => {
    expect(filters.length).toBeGreaterThan(0);
    for (const [i] of filters.entries()) {
      const fewer = filters.filter((_, j) => j !== i);
      expect(all.filter(hasEvents).some((r) => !matchesFilters(fewer, r)), `without filter ${i}`).toBe(true);
    }
  });

  it('the local stream reader hands the fan-out exactly the records the filters pass, in order', () => {
    expect(handedOver.map((r) => r.eventID)).toEqual(all.filter((r) => matchesFilters(filters, r)).map((r) => r.eventID));
  });
});

import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, it } from 'vitest';
import { liveSecrets, newWebhookId, newWebhookSecret, webhookIdTime } from '#shared/domain/webhook';
import { changeToEvents } from '#shared/webhooks/events';
import { signWithSecrets } from '#shared/webhooks/signing';
import {
  DELIVERY_FUNCTION_TIMEOUT_SECONDS, MAX_DELIVERY_ATTEMPTS, MAX_RETRY_DELAY_SECONDS, QUEUE_VISIBILITY_TIMEOUT_SECONDS, RETRY_DELAYS_SECONDS,
  retryDelaySeconds, SQS_MAX_VISIBILITY_SECONDS,
} from '#shared/webhooks/deliver';

const BODY = JSON.stringify({ type: 'device.updated', timestamp: '2026-01-01T00:00:00.000Z', data: { device_id: 'd', sequence: 3 } });

describe('webhook signing', () => {
  const verifiers = [
    ['standardwebhooks', (secret: string, body: string, headers: Record<string, string>) => new StandardWebhook(secret).verify(body, headers)],
    ['svix', (secret: string, body: string, headers: Record<string, string>) => new SvixWebhook(secret).verify(body, headers)],
  ] as const;

  it.each(verifiers)('%s accepts a signature of either live secret during a rotation, and refuses a tampered body, an old timestamp, another secret', (_, verify) => {
    const [current, previous, stranger] = [newWebhookSecret(), newWebhookSecret(), newWebhookSecret()];
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = newWebhookId(new Date());
    const headers = { ...signWithSecrets([current, previous], id, new Date(), BODY) };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => verify(current, BODY, headers)).not.toThrow();
    expect(() => verify(previous, BODY, headers)).not.toThrow();
    expect(() => verify(stranger, BODY, headers)).toThrow();
    expect(() => verify(current, BODY.replace('"sequence":3', '"sequence":4'), headers)).toThrow();
    const old = signWithSecrets([current], id, new Date(Date.now() - 10 * 60_000), BODY);
    expect(() => verify(current, BODY, { ...old })).toThrow();
    expect(() => verify(current, BODY, { ...headers, 'webhook-id': newWebhookId(new Date()) })).toThrow();
  });

  it('a retired secret no longer signs', () => {
    const now = new Date('2026-03-01T00:00:00Z');
    const secrets = [{ secret: 'whsec_a', createdAt: 1 }, { secret: 'whsec_b', createdAt: 0, retiresAt: now.getTime() / 1000 }];
    expect(liveSecrets(secrets, now).map((s) => s.secret)).toEqual(['whsec_a']);
    expect(liveSecrets(secrets, new Date(now.getTime() - 1000)).map((s) => s.secret)).toEqual(['whsec_a', 'whsec_b']);
  });
});

describe('webhook ids', () => {
  it('carry their time, and are deterministic with a seed', () => {
    const at = new Date('2026-05-06T07:08:09.123Z');
    expect(webhookIdTime(newWebhookId(at))).toEqual(at);
    expect(newWebhookId(at, 'record/app')).toBe(newWebhookId(at, 'record/app'));
    expect(newWebhookId(at, 'record/app')).not.toBe(newWebhookId(at, 'record/other'));
    expect(webhookIdTime('msg_nope')).toBeUndefined();
  });
});

describe('retry schedule', () => {
  it('backs off for more than 24 hours, with up to 20 % jitter, every delay one SQS accepts', () => {
    expect(MAX_DELIVERY_ATTEMPTS).toBe(RETRY_DELAYS_SECONDS.length + 1);
    const least = RETRY_DELAYS_SECONDS.map((_, i) => retryDelaySeconds(i + 1, () => 0));
    const most = RETRY_DELAYS_SECONDS.map((_, i) => retryDelaySeconds(i + 1, () => 0.999));
    expect(least).toEqual([...RETRY_DELAYS_SECONDS]);
    // Even with no jitter at all, the 10th attempt comes more than a day (and some hours) after the first.
    expect(least.reduce((a, b) => a + b)).toBeGreaterThanOrEqual(24 * 3600 + 4 * 3600);
    for (let i = 1; i < least.length; i++) expect(least[i]).toBeGreaterThanOrEqual(least[i - 1]!);
    most.forEach((delay, i) => expect(delay).toBe(Math.round(RETRY_DELAYS_SECONDS[i]! * (1 + 0.2 * 0.999))));
  });

  it('never asks SQS for more than what is left of 12 hours when the call comes at the latest', () => {
    // The call comes within the queue's visibility timeout plus the function's timeout of the receipt.
    expect(MAX_RETRY_DELAY_SECONDS).toBe(SQS_MAX_VISIBILITY_SECONDS - QUEUE_VISIBILITY_TIMEOUT_SECONDS - DELIVERY_FUNCTION_TIMEOUT_SECONDS);
    for (let attempt = 1; attempt < MAX_DELIVERY_ATTEMPTS + 2; attempt++) {
      expect(retryDelaySeconds(attempt, () => 0.999999)).toBeLessThanOrEqual(MAX_RETRY_DELAY_SECONDS);
    }
    // The schedule's longest jittered delay leaves hours, not seconds, of the 12 (a slow invocation, a compressed local clock).
    expect(Math.max(...RETRY_DELAYS_SECONDS) * 1.2).toBeLessThanOrEqual(SQS_MAX_VISIBILITY_SECONDS - 2 * 3600);
  });
});

describe('changeToEvents', () => {
  const device = { pk: 'USER#u1', sk: 'DEVICE#d1', id: 'd1', name: 'A', place: 'P', connected: false, last_connection: 't0', seq: 4, ownerId: 'u1' };
  const record = (eventName: 'INSERT' | 'MODIFY' | 'REMOVE', oldImage?: Record<string, unknown>, newImage?: Record<string, unknown>) =>
    ({ eventId: 'e1', eventName, at: new Date(0), oldImage, newImage });

  it('a rename is device.updated with the changed public fields; a connection is device.connection_changed; both carry the sequence', () => {
    const change = changeToEvents(record('MODIFY', device, { ...device, name: 'B', connected: true, last_connection: 't1', seq: 5 }));
    expect(change?.kind).toBe('device');
    expect(change?.events).toEqual([
      { type: 'device.updated', timestamp: '1970-01-01T00:00:00.000Z', data: { user_id: 'u1', device_id: 'd1', sequence: 5, changes: { name: 'B' } } },
      { type: 'device.connection_changed', timestamp: '1970-01-01T00:00:00.000Z', data: { user_id: 'u1', device_id: 'd1', sequence: 5, connected: true, last_connection: 't1' } },
    ]);
  });

  it('added, removed, consent removal and a family revoked for reuse are events; other items and internal fields are not', () => {
    expect(changeToEvents(record('INSERT', undefined, device))?.events[0]?.type).toBe('device.added');
    expect(changeToEvents(record('REMOVE', device))?.events[0]).toMatchObject({ type: 'device.removed', data: { sequence: 5 } });
    expect(changeToEvents(record('REMOVE', { pk: 'USER#u1', sk: 'CONSENT#c1' }))).toMatchObject({
      kind: 'grant', clientId: 'c1', events: [{ type: 'grant.revoked', data: { user_id: 'u1', client_id: 'c1', reason: 'user_revoked' } }],
    });
    const family = { pk: 'FAMILY#f', sk: 'FAMILY', userId: 'u1', clientId: 'c1', status: 'active' };
    expect(changeToEvents(record('MODIFY', family, { ...family, status: 'revoked', revokedReason: 'refresh_token_reuse' }))?.events[0])
      .toMatchObject({ type: 'grant.revoked', data: { reason: 'refresh_token_reuse' } });
    // Revoked with the consent (the user revoked the application): told once, by the consent's removal.
    expect(changeToEvents(record('MODIFY', family, { ...family, status: 'revoked', revokedReason: 'user_revoked' }))).toBeUndefined();
    expect(changeToEvents(record('MODIFY', device, { ...device, seq: 5 }))).toBeUndefined();
    expect(changeToEvents(record('INSERT', undefined, { pk: 'SESSION#x', sk: 'SESSION' }))).toBeUndefined();
  });
});

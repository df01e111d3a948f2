import { randomUUID } from 'node:crypto';
import { PutCommand } from '#shared/data/commands';
import type { DocumentClient } from '#shared/data/document-client';
import {
  BENCH_FLOOR_PREFIX, clientsOfDeveloperIndexKey, consentOfClientIndexKey, familiesOfClientIndexKey, sessionsOfUserIndexKey,
} from '#shared/data/item-keys';
import type { FloorStep, ItemKind } from '#shared/bench-floor';
import type { FloorEvent, FloorRequest } from './baseline/floor.ts';
import { SoftwarePasskey } from '../test/support/software-passkey.ts';

// A function's floor: the fewest steps its design allows (DynamoDB requests of the same kinds, plus
// the scrypt or the fixed wait its design mandates), run by the floor bundle (baseline/floor.ts) in
// a fresh process, so that the function's cold start is compared with the same work done by code
// that does nothing else. Floors are written by item kind (shared/bench-floor.ts), in the scenarios of
// bench/scenarios.ts and in the declarations' `bench`; the requests work on
// stand-in items under `BENCH#floor#…` with the attributes and sizes of the service's items, so that
// a floor neither depends on the service's key layout nor disturbs the scenarios' data.

/** Steps that are not DynamoDB requests. */
const NOT_REQUESTS = new Set<FloorStep['op']>(['scrypt', 'sign', 'wait', 'zxcvbn', 'passkeyCheck', 'qrCode', 'mail', 'addressCheck', 'queueClient', 'queueSend', 'signedPost', 'kmsClient']);

/**
 * Which floor bundle a floor runs as (bench/bundle.ts): the one with the SQS client library for a
 * floor that loads it or sends with it, the one with the KMS client library, or the plain one.
 */
export function floorLibrary(steps: readonly FloorStep[]): 'sqs' | 'kms' | undefined {
  const sqs = steps.some((s) => s.op === 'queueClient' || s.op === 'queueSend');
  const kms = steps.some((s) => s.op === 'kmsClient');
  if (sqs && kms) throw new Error('no floor bundle carries both the SQS and the KMS client library');
  return sqs ? 'sqs' : kms ? 'kms' : undefined;
}

/** shared/accounts/password.ts's parameters, written out: the floor imports nothing of the service. */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32, maxmem: 64 * 1024 * 1024 } as const;

/** A confirmation e-mail as the service words it (shared/accounts/accounts.ts), link included. */
const MAIL = {
  to: 'camille.roux@example.com',
  subject: 'Confirm your e-mail address',
  text: `Hello Camille,\n\nConfirm your e-mail address by opening this link within 24 hours:\nhttps://auth.example.com/confirm-email?token=${'x'.repeat(43)}\n\nIf you did not create an account, ignore this message.\n`,
};
/** The IPv6 literal of the benchmark's webhook URL (bench/scenarios.ts): a public address, checked without DNS. */
export const BENCH_WEBHOOK_ADDRESS = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';

/** About the length of an access token's signing input (base64url header and claims). */
const ACCESS_TOKEN_SIGNING_INPUT_BYTES = 420;

/** DynamoDB requests of a floor (scrypt, signature and wait are not DynamoDB requests). */
export const floorRequests = (steps: readonly FloorStep[]) => steps.filter((s) => !NOT_REQUESTS.has(s.op)).length;

/** E.g. `BatchGetItem(session, user) + Query(gsi1: client ×2)`; `none` for an empty floor. */
export function floorLabel(steps: readonly FloorStep[]): string {
  if (steps.length === 0) return 'none';
  return steps.map((s) => {
    switch (s.op) {
      case 'BatchGetItem':
      case 'TransactWriteItems':
        return `${s.op}(${s.of.join(', ')})`;
      case 'Query':
        return `Query(${s.index ? `${s.index}: ` : ''}${s.of} ×${s.count})`;
      case 'scrypt':
        return 'scrypt';
      case 'sign':
        return 'RS256 signature';
      case 'wait':
        return `wait ${s.ms} ms`;
      case 'zxcvbn':
        return 'zxcvbn';
      case 'qrCode':
        return 'QR code';
      case 'passkeyCheck':
        return s.ceremony === 'get' ? 'passkey signature check' : 'passkey registration check';
      case 'mail':
        return 'e-mail';
      case 'addressCheck':
        return 'address check';
      case 'queueClient':
        return 'SQS client';
      case 'queueSend':
        return 'SQS send';
      case 'signedPost':
        return 'signed POST';
      case 'kmsClient':
        return 'KMS client';
      default:
        return `${s.op}(${s.of})`;
    }
  }).join(' + ');
}

const USER_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const CLIENT_ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const HASH = 'b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c';
const STAMP = '2026-01-02T03:04:05.678';
/** A refresh token (`<user id>.<family id>.<43 characters>`, 117 characters) sealed with the one before it (see sealWith). */
const SEALED_TOKEN = `c2VhbGVkLWl2LTEy.dGFnLW9mLXNpeHRlZW4tYnl0ZXM.${'x'.repeat(156)}`;
const SCOPES = ['read_user', 'read_device', 'write_device', 'offline_access'];
/** An authenticator app's shared secret: 160 bits in base32. */
const TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
/** A credential id as platform authenticators make them (32 bytes, base64url). */
const CREDENTIAL_ID = 'q2Zr0Hk8vW1xYc3dE5fG7hJ9kL0mN2pQ4rS6tU8vW0x';

/** The attributes of each kind of item (keys apart), with the service's names and typical sizes. */
const ITEMS: Record<ItemKind, Record<string, unknown>> = {
  user: {
    id: USER_ID, firstname: 'Alice', lastname: 'Martin', avatar_url: `/avatars/${USER_ID}.png`, gender: 2, email: 'alice@example.com',
    email_confirmed: true, creation_date: STAMP, update_date: STAMP,
    passwordHash: 'scrypt$32768$8$1$dCKeGvzeAEzSqrQNyRa_UQ$T8Xmxk76qoBLfJI3A12KfEAoeDQ7tucmXgTpna0Z9-g',
  },
  email: { userId: USER_ID },
  device: {
    id: '0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d', name: 'Living room', place: 'Paris apartment', version: '2.4.1', last_connection: STAMP,
    active: false, connected: true, sound: true, latitude: 48.8566, longitude: 2.3522, reference: '0a1b2c3d4e5f',
  },
  session: { userId: USER_ID, expiresAt: 1_800_000_000, ...sessionsOfUserIndexKey(USER_ID, HASH) },
  client: {
    clientId: CLIENT_ID, secretHash: HASH, name: 'Home Dashboard', website: 'https://dashboard.example.com',
    description: 'Example third-party application: lists your devices and switches their away mode.',
    redirectUris: ['https://dashboard.example.com/callback'], developerId: USER_ID, developerName: 'Alice Martin', createdAt: STAMP,
    ...clientsOfDeveloperIndexKey(USER_ID, STAMP),
  },
  consent: { userId: USER_ID, clientId: CLIENT_ID, scopes: SCOPES, grantedAt: STAMP, ...consentOfClientIndexKey(CLIENT_ID, USER_ID) },
  // A code is its family's item, pending (shared/domain/grant.ts).
  code: {
    familyId: USER_ID, clientId: CLIENT_ID, userId: USER_ID, redirectUri: 'https://dashboard.example.com/callback', scopes: SCOPES,
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', codeHash: HASH, status: 'pending', grantGeneration: USER_ID,
    expiresAt: 1_800_000_000, ...familiesOfClientIndexKey(CLIENT_ID, USER_ID, USER_ID),
  },
  family: {
    familyId: USER_ID, clientId: CLIENT_ID, userId: USER_ID, scopes: SCOPES, status: 'active', createdAt: STAMP, grantGeneration: USER_ID,
    activeTokenHash: HASH, previousTokenHash: HASH, rotatedAt: 1_800_000_000_000, sealedSuccessor: SEALED_TOKEN,
    ...familiesOfClientIndexKey(CLIENT_ID, USER_ID, USER_ID),
  },
  link: { purpose: 'reset-password', userId: USER_ID, generation: 0, expiresAt: 1_800_000_000 },
  mailLimit: { sent: 1, expiresAt: 1_800_000_000 },
  throttle: { failures: 1, nextAttemptAt: 1_800_000_000_000, expiresAt: 1_800_000_000 },
  knownBrowser: { userId: USER_ID, failures: 0, expiresAt: 1_800_000_000 },
  reveal: {
    clientId: CLIENT_ID, developerId: USER_ID, reason: 'rotated', expiresAt: 1_800_000_000,
    sealedSecret: 'c2VhbGVkLWl2LTEy.dGFnLW9mLXNpeHRlZW4tYnl0ZXM.Ym9keS1vZi10aGUtc2VhbGVkLXNlY3JldC1mb3J0eS10aHJlZS1jaGFyYWN0ZXJzLWxvbmc',
  },
  webhook: {
    url: 'https://dashboard.example.com/webhooks', createdAt: '2026-01-02T03:04:05.678Z', updatedAt: '2026-01-02T03:04:05.678Z',
    secrets: [{ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw6YNrJS+GaIA=', createdAt: 1_767_323_045 }],
  },
  // The signing-key schedule (signing-key-repo.ts): two keys, as between rotations.
  keySchedule: {
    version: 3,
    keys: [
      { kid: 'b5bb9d8014a0f9b1', ref: 'arn:aws:kms:eu-west-1:123456789012:key/3f2504e0-4f89-41d3-9a0c-0305e82c3301', createdAt: 1_767_323_045, activateAt: 1_767_330_245, retireAt: 1_775_099_045 },
      { kid: 'c7d08a1e2f3b4c5d', ref: 'arn:aws:kms:eu-west-1:123456789012:key/7c9e6679-7425-40de-944b-e07fc1f90ae7', createdAt: 1_775_091_845, activateAt: 1_775_099_045 },
    ],
  },
  totp: { secret: TOTP_SECRET, lastStep: 59_000_000, enrolledAt: STAMP },
  totpEnrolment: { secret: TOTP_SECRET, expiresAt: 1_800_000_000 },
  // The hashes of the 10 recovery codes an enrolment makes (a string set).
  recoveryCodes: { codes: new Set(Array.from({ length: 10 }, (_, i) => `${HASH.slice(0, -2)}${String(i).padStart(2, '0')}`)), createdAt: STAMP },
  // The 10 codes (19 characters each) sealed for their one showing.
  recoveryReveal: { sealed: `c2VhbGVkLWl2LTEy.dGFnLW9mLXNpeHRlZW4tYnl0ZXM.${'x'.repeat(267)}`, expiresAt: 1_800_000_000 },
  pendingSignIn: { userId: USER_ID, expiresAt: 1_800_000_000 },
  // A passkey: its COSE ES256 public key (77 bytes) in base64url, and what the security page shows.
  passkey: {
    credentialId: CREDENTIAL_ID, publicKey: 'x'.repeat(103), counter: 0, transports: ['hybrid', 'internal'], name: 'Work laptop',
    createdAt: STAMP, lastUsedAt: STAMP, backedUp: true,
  },
  passkeyClaim: { userId: USER_ID },
  challenge: { purpose: 'authenticate', expiresAt: 1_800_000_000 },
  delivery: {
    clientId: CLIENT_ID, webhookId: 'msg_mjwq8ry8c_5a4b3c2d1e0f9a8b7c6d', eventType: 'device.updated', status: 'delivered', attempts: 1,
    payload: JSON.stringify({ type: 'device.updated', timestamp: '2026-01-02T03:04:05.678Z', data: { user_id: USER_ID, device_id: USER_ID, sequence: 7, changes: { active: true } } }),
    lastStatusCode: 204, lastLatencyMs: 84, lastAttemptAt: '2026-01-02T03:04:05.900Z', createdAt: '2026-01-02T03:04:05.678Z', expiresAt: 1_800_000_000,
  },
};

/** What an UpdateItem of each kind changes (the service's updates of it). */
const CHANGES: Partial<Record<ItemKind, Record<string, unknown>>> = {
  device: { name: 'Living room', active: false },
  // A rotation (the larger of its two updates; a revocation sets status and expiresAt).
  family: { activeTokenHash: HASH, previousTokenHash: HASH, rotatedAt: 1_800_000_000_000, sealedSuccessor: SEALED_TOKEN },
  // The exchange: the code becomes its family (it also removes three attributes).
  code: { status: 'active', activeTokenHash: HASH, createdAt: STAMP },
  client: { secretHash: HASH },
  mailLimit: { sent: 2, expiresAt: 1_800_000_000 },
  // A known browser's own reservation (a login from it).
  knownBrowser: { failures: 1 },
  // One failure reserved on a single record (a second factor's, an address's): the three-record login reserves in a transaction.
  throttle: { failures: 1, nextAttemptAt: 1_800_000_000_000, expiresAt: 1_800_000_000 },
  webhook: { url: 'https://dashboard.example.com/webhooks', updatedAt: STAMP },
  // An attempt recorded: delivered (the function also adds one to `attempts`).
  delivery: { status: 'delivered', lastAttemptAt: '2026-01-02T03:04:05.900Z', lastStatusCode: 204, lastLatencyMs: 3, attempts: 1 },
};

const PREFIX = BENCH_FLOOR_PREFIX;
/** The `i`-th stand-in of a kind (distinct keys: one BatchGetItem may read two items of a kind). */
const standInKey = (kind: ItemKind, i: number) => ({ pk: `${PREFIX}${kind}#${i}`, sk: kind });
const queryPartition = (kind: ItemKind, count: number) => `${PREFIX}${kind}×${count}`;

/** The stand-in items of one kind: its attributes under `key`, its gsi1 entry (if any) under `gsi1pk`. */
function itemOf(kind: ItemKind, key: { pk: string; sk: string }, gsi1pk = `${PREFIX}writes`) {
  const { gsi1pk: indexed, ...attributes } = ITEMS[kind];
  return { ...key, ...attributes, ...(indexed === undefined ? {} : { gsi1pk, gsi1sk: randomUUID() }) };
}

/** A Standard Webhooks message id as the service makes them (`msg_`, the time in base 36, 20 hex characters). */
const webhookId = () => `msg_${Date.now().toString(36).padStart(9, '0')}_${randomUUID().replace(/-/g, '').slice(0, 20)}`;

/**
 * Creates floors' stand-ins and fills their events with concrete requests. `receiverUrl`: where a
 * `signedPost` step delivers (the benchmark's loopback receiver, bench/webhook-ends.ts).
 */
export function createFloors(doc: DocumentClient, table: string, { receiverUrl }: { receiverUrl?: string } = {}) {
  const putItem = (Item: Record<string, unknown>) => doc.send(new PutCommand({ TableName: table, Item }));
  const readKeys = (kinds: readonly ItemKind[]) => kinds.map((kind, i) => standInKey(kind, kinds.slice(0, i).filter((k) => k === kind).length));
  const fresh = (kind: ItemKind) => itemOf(kind, { pk: `${PREFIX}${randomUUID()}`, sk: kind });

  /** One event's requests; items an event deletes are written first. */
  async function request(s: FloorStep): Promise<FloorRequest> {
    switch (s.op) {
      case 'GetItem':
        return { op: 'GetItem', key: readKeys([s.of])[0]! };
      case 'BatchGetItem':
        return { op: 'BatchGetItem', keys: readKeys(s.of) };
      case 'Query':
        return s.index
          ? { op: 'Query', index: s.index, pk: queryPartition(s.of, s.count) }
          : { op: 'Query', pk: queryPartition(s.of, s.count), skPrefix: `${s.of}#` };
      case 'PutItem':
        return { op: 'PutItem', item: fresh(s.of) };
      case 'UpdateItem':
        return { op: 'UpdateItem', key: standInKey(s.of, 0), set: CHANGES[s.of] ?? { updatedAt: STAMP } };
      case 'DeleteItem': {
        const item = fresh(s.of);
        await putItem(item);
        return { op: 'DeleteItem', key: { pk: item.pk, sk: item.sk } };
      }
      case 'TransactWriteItems':
        return { op: 'TransactWriteItems', items: s.of.map(fresh) };
      case 'sign':
        return { op: 'sign', bytes: ACCESS_TOKEN_SIGNING_INPUT_BYTES };
      case 'scrypt':
        return { op: 'scrypt', password: 'correct horse battery staple', salt: randomUUID(), ...SCRYPT };
      case 'wait':
        return { op: 'wait', ms: s.ms };
      case 'mail':
        return { op: 'mail', name: `floor-${randomUUID()}`, message: MAIL };
      case 'addressCheck':
        return { op: 'addressCheck', address: BENCH_WEBHOOK_ADDRESS };
      case 'queueClient':
        return { op: 'queueClient' };
      case 'queueSend':
        // A device event's delivery message (shared/webhooks/queue.ts's WebhookMessage).
        return { op: 'queueSend', body: JSON.stringify({ clientId: CLIENT_ID, webhookId: webhookId(), userId: USER_ID }) };
      case 'signedPost': {
        if (!receiverUrl) throw new Error('a signedPost floor step needs the receiver\'s URL (createFloors)');
        const secret = (ITEMS.webhook.secrets as { secret: string }[])[0]!.secret;
        return { op: 'signedPost', url: receiverUrl, secret, webhookId: webhookId(), body: String(ITEMS.delivery.payload) };
      }
      case 'kmsClient':
        return { op: 'kmsClient' };
      case 'qrCode':
        return { op: 'qrCode', text: `otpauth://totp/Device%20and%20User%20Service:alice%40example.com?secret=${TOTP_SECRET}&period=30&digits=6&algorithm=SHA1&issuer=Device%20and%20User%20Service` };
      case 'passkeyCheck': {
        // A software authenticator's answer for the auth host of the scenarios' default issuer.
        const passkey = new SoftwarePasskey(USER_ID);
        const challenge = randomUUID();
        const [origin, rpId] = ['https://auth.example.com', 'auth.example.com'];
        const { credentialId, publicKey } = passkey.stored();
        const response = s.ceremony === 'get' ? passkey.answer(challenge, origin, rpId) : passkey.registration(challenge, origin, rpId);
        return { op: 'passkeyCheck', ceremony: s.ceremony, response, challenge, origin, rpId, credential: { id: credentialId, publicKey } };
      }
      case 'zxcvbn':
        return { op: 'zxcvbn', password: 'correct horse battery staple', userInputs: ['camille.roux@example.com', 'camille.roux', 'camille', 'roux'] };
    }
  }

  return {
    /** Writes the stand-ins the floors read, update and query (once, before any floor runs). */
    async prepare(floors: readonly (readonly FloorStep[])[]): Promise<void> {
      const items = new Map<string, Record<string, unknown>>();
      const add = (item: Record<string, unknown>) => items.set(`${String(item.pk)}|${String(item.sk)}`, item);
      for (const s of floors.flat()) {
        if (s.op === 'GetItem' || s.op === 'BatchGetItem' || s.op === 'UpdateItem') {
          const kinds = s.op === 'BatchGetItem' ? s.of : [s.of];
          // A throttle record is read as absent (a first attempt finds none), but one is there to update.
          readKeys(kinds).forEach((key, i) => { if (kinds[i] !== 'throttle' || s.op === 'UpdateItem') add(itemOf(kinds[i]!, key)); });
        } else if (s.op === 'Query') {
          const partition = queryPartition(s.of, s.count);
          for (let i = 0; i < s.count; i++) {
            add(s.index
              ? itemOf(s.of, { pk: `${partition}#${i}`, sk: s.of }, partition)
              : itemOf(s.of, { pk: partition, sk: `${s.of}#${i}` }));
          }
        }
      }
      for (const item of items.values()) await putItem(item);
    },

    /** `count` events, each good for one run of the floor bundle (writes go to fresh keys). */
    async events(steps: readonly FloorStep[], count: number): Promise<FloorEvent[]> {
      const out: FloorEvent[] = [];
      for (let i = 0; i < count; i++) out.push({ steps: await Promise.all(steps.map(request)) });
      return out;
    },
  };
}

import { createHmac, createPrivateKey, scrypt, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { isIP } from 'node:net';
import { join } from 'node:path';
import {
  BatchGetCommand, DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ENV, MAIL_ENV } from '#shared/config';
import { doc, table } from './handler.ts';

// The physical floor of a function's cold start: the baseline's document client (handler.ts), in
// the same kind of fresh process, making exactly the requests its event lists, in order — the
// fewest the function's design allows, of the same kinds (bench/floors.ts builds them from
// bench/scenarios.ts). Nothing of the service is imported, so the floor cannot inherit the
// service's overheads; it answers 200 once every step is done.

type Key = { pk: string; sk: string };
type Item = Key & Record<string, unknown>;

/** One step of a floor event: a DynamoDB request on the table, or a step the design mandates. */
/** The two checks of the WebAuthn library's file (shared/accounts/passkey-verify.ts), as the floor calls them. */
interface PasskeyChecks {
  verifyAuthenticationResponse(options: object): Promise<{ verified: boolean }>;
  verifyRegistrationResponse(options: object): Promise<{ verified: boolean }>;
}

export type FloorRequest =
  | { op: 'GetItem'; key: Key }
  | { op: 'BatchGetItem'; keys: Key[] }
  /** On the table: `pk = :pk AND begins_with(sk, :prefix)`; on gsi1: `gsi1pk = :pk`. */
  | { op: 'Query'; index?: 'gsi1'; pk: string; skPrefix?: string }
  | { op: 'PutItem'; item: Item }
  | { op: 'UpdateItem'; key: Key; set: Record<string, unknown> }
  | { op: 'DeleteItem'; key: Key }
  /** Puts of fresh items, each refusing to overwrite (as the service's transactions condition their writes). */
  | { op: 'TransactWriteItems'; items: Item[] }
  /** One password hash or verification: the same work either way. */
  | { op: 'scrypt'; password: string; salt: string; keylen: number; N: number; r: number; p: number; maxmem: number }
  /**
   * One RS256 signature of a `bytes`-long JWT signing input with the key the function signs with:
   * in AWS a KMS Sign request, locally the key file of LOCAL_SIGNING_KEY_FILE, read and parsed here.
   */
  | { op: 'sign'; bytes: number }
  /**
   * One e-mail sent: in AWS an SES request; locally, as the functions' outbox mailer does, one JSON
   * file of the stored message (id, time, message) in the outbox folder, created if need be.
   */
  | { op: 'mail'; name: string; message: { to: string; subject: string; text: string } }
  /** The check that a webhook URL's IP literal is a public address: parsing it (node:net's isIP). */
  | { op: 'addressCheck'; address: string }
  /** The SQS client library, loaded with the bundle (floor-queue.ts): this step only selects that bundle. */
  | { op: 'queueClient' }
  /** One message (`body`) sent to the webhook queue of WEBHOOK_QUEUE_URL: one SendMessageBatch (floor-queue.ts sends it). */
  | { op: 'queueSend'; body: string }
  /**
   * One webhook delivery: `body` signed as Standard Webhooks signs it (`v1,` and the base64
   * HMAC-SHA256, keyed with the secret's bytes, of `<id>.<timestamp>.<body>`) and POSTed to `url`
   * with its headers, no connection reuse and a 5 s limit, as shared/webhooks/http-post.ts does;
   * the answer is read.
   */
  | { op: 'signedPost'; url: string; secret: string; webhookId: string; body: string }
  /** The KMS client library, loaded with the bundle (floor-kms.ts): this step only selects that bundle. */
  | { op: 'kmsClient' }
  /** The answer leaves no sooner than `ms` after the call began; the steps after it run meanwhile. */
  | { op: 'wait'; ms: number }
  /**
   * One password strength estimate: the estimator file beside this bundle (zxcvbn-ts and its common
   * and English dictionaries, bundled from shared/domain/password-strength.ts) loaded on first use,
   * as the functions load it, and one password checked with the account's words.
   */
  | { op: 'zxcvbn'; password: string; userInputs: string[] }
  /**
   * One passkey answer verified: the WebAuthn library's checks, the file beside this bundle that the
   * passkey functions load on first use (shared/accounts/passkey-verify.ts), on a sign-in's signature
   * or a registration's `none` attestation, made for `challenge`, `origin` and `rpId`.
   */
  /** One QR code drawn as the authenticator set-up pages draw theirs: the encoder's file beside this bundle (shared/views/qr-code.ts). */
  | { op: 'qrCode'; text: string }
  | { op: 'passkeyCheck'; ceremony: 'get' | 'create'; response: string; challenge: string; origin: string; rpId: string; credential: { id: string; publicKey: string } };

export interface FloorEvent {
  steps: FloorRequest[];
}

/** What the floor bundles with a client library add (floor-queue.ts): sending one message to the webhook queue. */
export const libraries: { sendToQueue?: (body: string) => Promise<unknown> } = {};

/** Runs the event's steps in order and answers 200. */
export const handler = async (event: FloorEvent) => {
  const timers: Promise<void>[] = [];
  for (const step of event.steps) {
    if (step.op === 'wait') timers.push(new Promise((resolve) => setTimeout(resolve, step.ms)));
    else await run(step);
  }
  await Promise.all(timers);
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
};

async function run(step: Exclude<FloorRequest, { op: 'wait' }>): Promise<unknown> {
  switch (step.op) {
    case 'GetItem':
      return doc.send(new GetCommand({ TableName: table, Key: step.key }));
    case 'BatchGetItem':
      return doc.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: step.keys, ConsistentRead: true } } }));
    case 'Query':
      return doc.send(new QueryCommand(step.index
        ? { TableName: table, IndexName: step.index, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': step.pk } }
        : {
            TableName: table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
            ExpressionAttributeValues: { ':pk': step.pk, ':prefix': step.skPrefix ?? '' },
          }));
    case 'PutItem':
      return doc.send(new PutCommand({ TableName: table, Item: step.item, ConditionExpression: 'attribute_not_exists(pk)' }));
    case 'UpdateItem': {
      const entries = Object.entries(step.set);
      return doc.send(new UpdateCommand({
        TableName: table, Key: step.key, ConditionExpression: 'attribute_exists(pk)',
        UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name])),
        ExpressionAttributeValues: Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])),
      }));
    }
    case 'DeleteItem':
      return doc.send(new DeleteCommand({ TableName: table, Key: step.key }));
    case 'TransactWriteItems':
      return doc.send(new TransactWriteCommand({
        TransactItems: step.items.map((Item) => ({ Put: { TableName: table, Item, ConditionExpression: 'attribute_not_exists(pk)' } })),
      }));
    case 'sign': {
      const key = createPrivateKey(readFileSync(process.env[ENV.localSigningKeyFile] ?? '', 'utf8'));
      return sign('sha256', Buffer.alloc(step.bytes, 'a'), key);
    }
    case 'mail': {
      const dir = process.env[MAIL_ENV.outboxDir] ?? '';
      await mkdir(dir, { recursive: true });
      const stored = { id: step.name, sentAt: new Date().toISOString(), ...step.message };
      return writeFile(join(dir, `${step.name}.json`), `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    }
    case 'addressCheck':
      return isIP(step.address);
    case 'queueClient':
    case 'kmsClient':
      return undefined;
    case 'queueSend':
      if (!libraries.sendToQueue) throw new Error('an SQS send runs in the floor-queue bundle');
      return libraries.sendToQueue(step.body);
    case 'signedPost':
      return signedPost(step);
    case 'zxcvbn': {
      const estimator = (await import(new URL('./password-strength.mjs', import.meta.url).href)) as { estimateStrength: (password: string, userInputs: string[]) => unknown };
      return estimator.estimateStrength(step.password, step.userInputs);
    }
    case 'qrCode': {
      const { qrCodeDataUrl } = (await import(new URL('./qr-code.mjs', import.meta.url).href)) as { qrCodeDataUrl: (text: string) => string };
      return qrCodeDataUrl(step.text).length;
    }
    case 'passkeyCheck': {
      const checks = (await import(new URL('./passkey-verify.mjs', import.meta.url).href)) as PasskeyChecks;
      const expected = { response: JSON.parse(step.response), expectedChallenge: step.challenge, expectedOrigin: step.origin, expectedRPID: step.rpId, requireUserVerification: true };
      const result = step.ceremony === 'get'
        ? await checks.verifyAuthenticationResponse({ ...expected, credential: { id: step.credential.id, publicKey: Buffer.from(step.credential.publicKey, 'base64url'), counter: 0 } })
        : await checks.verifyRegistrationResponse(expected);
      if (!result.verified) throw new Error('the floor\'s passkey answer did not verify');
      return result.verified;
    }
    case 'scrypt': {
      const { password, salt, keylen, ...params } = step;
      return new Promise((resolve, reject) => scrypt(password, salt, keylen, params, (error, key) => (error ? reject(error) : resolve(key))));
    }
  }
}

function signedPost(step: Extract<FloorRequest, { op: 'signedPost' }>): Promise<number | undefined> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const key = Buffer.from(step.secret.replace(/^whsec_/, ''), 'base64');
  const signature = `v1,${createHmac('sha256', key).update(`${step.webhookId}.${timestamp}.${step.body}`).digest('base64')}`;
  return new Promise((resolve, reject) => {
    const req = request(step.url, {
      method: 'POST',
      agent: false,
      headers: {
        'webhook-id': step.webhookId, 'webhook-timestamp': timestamp, 'webhook-signature': signature,
        'content-type': 'application/json', 'content-length': String(Buffer.byteLength(step.body)), 'user-agent': 'floor',
      },
    }, (res) => {
      res.resume();
      res.on('end', () => {
        clearTimeout(timer);
        resolve(res.statusCode);
      });
    });
    const timer = setTimeout(() => req.destroy(new Error('timeout')), 5000);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(step.body);
  });
}

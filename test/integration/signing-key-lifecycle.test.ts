import { CreateKeyCommand } from '@aws-sdk/client-kms';
import { PutCommand } from '#shared/data/commands';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LifecycleEvent, LifecycleResponse, RotationHandlerDeps } from '#functions/ops/rotate-signing-key';
import { createKmsKeyStore } from '#shared/keys/kms-keys';
import { kmsSignerSource } from '#shared/keys/kms-signer';
import { KEY_SCHEDULE_CACHE_SECONDS, PUBLICATION_WAIT_LIMIT_SECONDS, PUBLISH_LEAD_SECONDS, ROTATION_PERIOD_DAYS } from '#shared/keys/schedule';
import { signingKeysKey } from '#shared/data/item-keys';
import { createSigningKeyRepo, type SigningKeyRepo } from '#shared/data/signing-key-repo';
import { catchCloudFormationResponses } from '../support/cloudformation-response';
import { createFakeKms } from '../support/fake-kms';
import { freshTable } from '../support/service';
import { createKeyring } from '#shared/keys/keyring';
import { rotateSigningKeys, type RotationOptions } from '#shared/keys/rotation';

// The signing keys' life in KMS, from the deployment to the stack's deletion (a key's schedule,
// its retirement and the deletion's window): the rotation and its function over the real table (DynamoDB Local) and a KMS stand-in with
// real RSA keys (test/support/fake-kms.ts), which can refuse a new key for a while as KMS may. The
// clock is the test's: every step is given `now`; the stand-in measures its refusals on the real
// clock, so a test lifts one with refuseFreshKeys(0) where KMS's minutes would have passed.

const DAY = 86_400;
const ALIAS_PREFIX = 'alias/Test-signing';

let repo: SigningKeyRepo;
let tableDoc: Awaited<ReturnType<typeof freshTable>>;
let fake: ReturnType<typeof createFakeKms>;
let now: number;
const clock = () => new Date(now * 1000);
const pass = (seconds: number) => { now += seconds; };
const responses: { url: string; response: LifecycleResponse }[] = [];

beforeEach(async () => {
  // The schedule is one item per table: a table of its own keeps each test apart.
  tableDoc = await freshTable();
  repo = createSigningKeyRepo(tableDoc);
  fake = createFakeKms();
  now = Math.floor(Date.now() / 1000);
  responses.length = 0;
});
afterEach(() => tableDoc.doc.destroy());

const store = () => createKmsKeyStore({
  initialKeyId: fake.firstKeyArn, keyPolicy: '{"Version":"2012-10-17","Statement":[]}', owner: 'Test/stack-id', aliasPrefix: ALIAS_PREFIX,
}, fake.kms);
const step = (mode: RotationOptions['mode']) => rotateSigningKeys({ repo, store: store(), now: clock }, { mode });
const rotationFunction = async () => (await import('#functions/ops/rotate-signing-key')).createRotationHandler;
/** The rotation function's handler over this test's table and stand-in, its stack being deleted (a rollback's Delete: signing-key-rollback.test.ts). */
const handler = async (deps: Partial<RotationHandlerDeps> = {}) => (await rotationFunction())(() => ({
  repo, store: store(), now: clock, stackStatus: async () => 'DELETE_IN_PROGRESS', respond: async (url, response) => { responses.push({ url, response }); }, ...deps,
}));
const lifecycleEvent = (RequestType: LifecycleEvent['RequestType'], teardown: boolean, PhysicalResourceId?: string): LifecycleEvent => ({
  RequestType, ResponseURL: 'https://cloudformation-custom-resource-response.example/answer', RequestId: `request-${RequestType}`,
  StackId: 'arn:aws:cloudformation:eu-west-1:111122223333:stack/Test/0a1b2c3d-0000-4000-8000-000000000000',
  LogicalResourceId: 'TokenSigningLifecycle', ResourceProperties: { TeardownOnDelete: String(teardown) },
  ...(PhysicalResourceId ? { PhysicalResourceId } : {}),
});
const stackKeyId = () => fake.firstKeyArn.split('/').pop()!;
const keyState = () => fake.keys().map((key) => ({ kid: key.keyId, state: key.state, aliases: key.aliases }));

describe('a fresh deployment keeps its key', () => {
  it('the first scheduled run on a table without a schedule introduces no key: the stack key is recorded as active from then, due 90 days later', async () => {
    const deployedAt = now;

    const first = await step('when-due');

    expect(first.introduced).toBeUndefined();
    expect(first.awaiting).toBeUndefined();
    expect(fake.calls).not.toContain('CreateKey');
    const schedule = (await repo.getSchedule(true))!;
    expect(schedule.keys).toEqual([{
      kid: stackKeyId(), ref: fake.firstKeyArn, createdAt: deployedAt, activateAt: deployedAt, jwk: expect.objectContaining({ kid: stackKeyId(), kty: 'RSA' }),
    }]);
    pass(ROTATION_PERIOD_DAYS * DAY - 1);
    expect((await step('when-due')).introduced).toBeUndefined();
    expect(fake.calls).not.toContain('CreateKey');
    pass(1);
    const due = await step('when-due');
    expect(due.introduced).toMatchObject({ createdAt: deployedAt + ROTATION_PERIOD_DAYS * DAY });
    expect(fake.calls.filter((call) => call === 'CreateKey')).toHaveLength(1);
  });

  it('the deployment (the lifecycle resource\'s Create) records the stack key with its public key and points -current at it; an Update keeps the schedule', async () => {
    const deployedAt = now;

    const created = (await (await handler())(lifecycleEvent('Create', true)))!;

    expect(created).toEqual({
      Status: 'SUCCESS', PhysicalResourceId: 'signing-keys-0a1b2c3d-0000-4000-8000-000000000000', StackId: expect.any(String),
      RequestId: 'request-Create', LogicalResourceId: 'TokenSigningLifecycle',
    });
    expect(responses.map((r) => r.url)).toEqual(['https://cloudformation-custom-resource-response.example/answer']);
    expect((await repo.getSchedule(true))!.keys).toEqual([expect.objectContaining({ ref: fake.firstKeyArn, activateAt: deployedAt, jwk: expect.anything() })]);
    expect(keyState()).toEqual([{ kid: stackKeyId(), state: 'Enabled', aliases: [`${ALIAS_PREFIX}-current`] }]);

    pass(3600);
    const updated = await (await handler())(lifecycleEvent('Update', true, created.PhysicalResourceId));
    expect(updated).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: created.PhysicalResourceId });
    expect((await repo.getSchedule(true))!).toMatchObject({ version: 1, keys: [{ activateAt: deployedAt }] });
    expect(fake.calls).not.toContain('CreateKey');
  });

  it('a deployment whose new permissions do not apply yet still records the key; the next hourly step reads what it could not and points the alias', async () => {
    // Right after CloudFormation attached the role's policy, KMS may still refuse the stack's key for a moment.
    let refusing = true;
    const refusingStore = () => {
      const real = store();
      return {
        ...real,
        signerFor: (ref: string) => {
          const signer = real.signerFor(ref);
          return { ...signer, publicJwk: () => (refusing ? Promise.reject(new Error('AccessDeniedException')) : signer.publicJwk()) };
        },
        pointAliases: (aliases: { current: string; next?: string }) => (refusing ? Promise.reject(new Error('AccessDeniedException')) : real.pointAliases!(aliases)),
      };
    };

    expect((await (await handler({ store: refusingStore() }))(lifecycleEvent('Create', false)))!.Status).toBe('SUCCESS');
    expect((await repo.getSchedule(true))!.keys).toEqual([expect.not.objectContaining({ jwk: expect.anything() })]);
    expect(keyState()[0]!.aliases).toEqual([]);

    refusing = false;
    pass(3600);
    await rotateSigningKeys({ repo, store: refusingStore(), now: clock }, { mode: 'when-due' });
    expect((await repo.getSchedule(true))!.keys).toEqual([expect.objectContaining({ jwk: expect.objectContaining({ kid: stackKeyId() }) })]);
    expect(keyState()[0]!.aliases).toEqual([`${ALIAS_PREFIX}-current`]);
  });
});

describe('KMS refuses a new key for a while', () => {
  it('a rotation whose new key KMS refuses publishes nothing; a later run publishes it, and the JWKS answers every published key without asking KMS', async () => {
    await step('init');
    fake.refuseFreshKeys(300);
    const keyring = createKeyring({ repo, source: kmsSignerSource(fake.firstKeyArn, fake.kms), now: clock });

    const created = await step('now');

    expect(created.introduced).toBeUndefined();
    const waiting = created.awaiting!;
    expect(fake.keys().map((key) => key.keyId)).toEqual([stackKeyId(), waiting.kid]);
    expect((await repo.getSchedule(true))!.unpublished).toEqual([{ kid: waiting.kid, ref: expect.stringContaining(waiting.kid), createdAt: now }]);
    expect((await keyring.publishedKeys()).map((key) => key.kid)).toEqual([stackKeyId()]);
    expect((await keyring.currentSigner()).kid).toBe(stackKeyId());
    // Nothing else is created while one waits.
    expect((await step('now')).introduced).toBeUndefined();
    expect(fake.keys()).toHaveLength(2);

    // KMS's refusal lasts minutes; the next hourly run finds the key readable and publishes it from then.
    fake.refuseFreshKeys(0);
    pass(3600);
    const published = await step('when-due');

    expect(published.introduced).toMatchObject({ kid: waiting.kid, createdAt: now, activateAt: now + PUBLISH_LEAD_SECONDS, jwk: { kid: waiting.kid } });
    expect(published.awaiting).toBeUndefined();
    expect((await repo.getSchedule(true))!.unpublished).toBeUndefined();
    pass(KEY_SCHEDULE_CACHE_SECONDS);
    const kmsCallsBefore = fake.calls.length;
    expect((await keyring.publishedKeys()).map((key) => key.kid)).toEqual([stackKeyId(), waiting.kid]);
    expect(fake.calls.length).toBe(kmsCallsBefore);
    expect(fake.keys().find((key) => key.keyId === waiting.kid)!.aliases).toEqual([`${ALIAS_PREFIX}-next`]);
  });

  it('the JWKS answers every key it can when KMS refuses one (a schedule that holds no public keys), instead of failing whole', async () => {
    fake.refuseFreshKeys(300);
    const { KeyMetadata } = await fake.kms.send(new CreateKeyCommand({ KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY' }));
    const [ref, kid] = [KeyMetadata!.Arn!, KeyMetadata!.KeyId!];
    // The item as a rotation wrote it before public keys were kept in it.
    await tableDoc.doc.send(new PutCommand({
      TableName: tableDoc.table,
      Item: {
        ...signingKeysKey(), version: 1, keys: [
          { kid: stackKeyId(), ref: fake.firstKeyArn, createdAt: 0, activateAt: 0, retireAt: now + 2 * PUBLISH_LEAD_SECONDS },
          { kid, ref, createdAt: now, activateAt: now + PUBLISH_LEAD_SECONDS },
        ],
      },
    }));
    const keyring = createKeyring({ repo, source: kmsSignerSource(fake.firstKeyArn, fake.kms), now: clock });

    expect((await keyring.publishedKeys()).map((key) => key.kid)).toEqual([stackKeyId()]);
  });

  it('a created key KMS still refuses a day later fails the step (the Lambda error alarm), and stays listed for a later step or the teardown', async () => {
    await step('init');
    fake.refuseFreshKeys(10 * DAY);
    const { awaiting } = await step('now');
    pass(PUBLICATION_WAIT_LIMIT_SECONDS - 3600);
    expect((await step('when-due')).awaiting).toEqual(awaiting);

    pass(3600);
    await expect(step('when-due')).rejects.toThrow(`KMS has not given the public key of signing key ${awaiting!.kid}`);
    expect((await repo.getSchedule(true))!.unpublished).toEqual([awaiting]);
  });
});

describe('the stack\'s deletion deletes what rotations created', () => {
  /** A stack one rotation in (its key active), with a next key created but not published yet. */
  async function rotatedStack() {
    await (await handler())(lifecycleEvent('Create', true));
    const first = (await step('now')).introduced!;
    pass(PUBLISH_LEAD_SECONDS);
    fake.refuseFreshKeys(300);
    const waiting = (await step('now')).awaiting!;
    expect(keyState()).toEqual([
      { kid: stackKeyId(), state: 'Enabled', aliases: [] },
      // `-next` still names it: it moves to the next pending key once one is published.
      { kid: first.kid, state: 'Enabled', aliases: [`${ALIAS_PREFIX}-current`, `${ALIAS_PREFIX}-next`] },
      { kid: waiting.kid, state: 'Enabled', aliases: [] },
    ]);
    return { first, waiting };
  }

  it('schedules the deletion of every key a rotation created (published or waiting), never the stack\'s own, deletes both aliases, and no later run creates a key', async () => {
    const { first, waiting } = await rotatedStack();

    const deleted = await (await handler())(lifecycleEvent('Delete', true, 'signing-keys-x'));

    expect(deleted).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: 'signing-keys-x' });
    expect(keyState()).toEqual([
      { kid: stackKeyId(), state: 'Enabled', aliases: [] },
      { kid: first.kid, state: 'PendingDeletion', aliases: [] },
      { kid: waiting.kid, state: 'PendingDeletion', aliases: [] },
    ]);
    expect((await repo.getSchedule(true))!.closedAt).toBe(now);
    // The hourly rule may still fire before CloudFormation deletes it: nothing happens.
    pass(ROTATION_PERIOD_DAYS * DAY);
    for (const mode of ['when-due', 'now'] as const) expect((await step(mode)).closed).toBe(true);
    expect(fake.keys()).toHaveLength(3);
  });

  it('is idempotent: a second Delete (CloudFormation retrying, or an operator retrying a failed deletion) succeeds and changes nothing', async () => {
    await rotatedStack();
    await (await handler())(lifecycleEvent('Delete', true, 'signing-keys-x'));
    const after = keyState();
    const callsBefore = fake.calls.length;

    const again = await (await handler())(lifecycleEvent('Delete', true, 'signing-keys-x'));

    expect(again!.Status).toBe('SUCCESS');
    expect(keyState()).toEqual(after);
    expect(fake.calls.slice(callsBefore).sort()).toEqual(['DeleteAlias', 'DeleteAlias', 'ScheduleKeyDeletion', 'ScheduleKeyDeletion']);
  });

  it('keeps everything for a stage that keeps its data (TeardownOnDelete false)', async () => {
    await rotatedStack();
    const before = keyState();

    expect((await (await handler())(lifecycleEvent('Delete', false, 'signing-keys-x')))!.Status).toBe('SUCCESS');

    expect(keyState()).toEqual(before);
    expect((await repo.getSchedule(true))!.closedAt).toBeUndefined();
  });

  it('answers FAILED with the reason when the work fails, with the physical id it was given, and does not throw (no Lambda retry)', async () => {
    const failing = { ...repo, getSchedule: async () => { throw new Error('storage down'); } };

    const answer = await (await handler({ repo: failing }))(lifecycleEvent('Delete', true, 'signing-keys-x'));

    expect(answer).toMatchObject({ Status: 'FAILED', Reason: 'Error: storage down', PhysicalResourceId: 'signing-keys-x' });
    expect(responses).toHaveLength(1);
  });
});

describe('the answer to CloudFormation', () => {
  it('is a PUT of the JSON response to the pre-signed URL, without a content type (the URL is signed without one)', async () => {
    const catcher = await catchCloudFormationResponses();
    try {
      const withoutRespond = (await rotationFunction())(() => ({ repo, store: store(), now: clock }));

      await withoutRespond({ ...lifecycleEvent('Create', false), ResponseURL: catcher.url });

      expect(catcher.responses).toEqual([{
        method: 'PUT', contentType: expect.toSatisfy((type: string | undefined) => !type),
        body: expect.objectContaining({ Status: 'SUCCESS', RequestId: 'request-Create', LogicalResourceId: 'TokenSigningLifecycle' }),
      }]);
    } finally {
      await catcher.stop();
    }
  });
});

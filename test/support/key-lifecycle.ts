import type { LifecycleEvent, LifecycleResponse, RotationHandlerDeps } from '#functions/ops/rotate-signing-key';
import { createKmsKeyStore } from '#shared/keys/kms-keys';
import { createSigningKeyRepo, type SigningKeyRepo } from '#shared/data/signing-key-repo';
import { rotateSigningKeys, type RotationOptions } from '#shared/keys/rotation';
import { createFakeKms } from './fake-kms';
import { freshTable } from './service';

// The signing keys' life in KMS for the integration tests of the rotation function and its
// lifecycle: a table of its own (the schedule is one item per table), a KMS stand-in with real RSA
// keys (fake-kms.ts), the test's clock, and CloudFormation's side (the stack's status, the answers
// the function sends) as test doubles: CloudFormation has no local engine.

export const ALIAS_PREFIX = 'alias/Test-signing';
export const DAY = 86_400;
/** The rotated keys' key policy of the "deployment" under test (SIGNING_KEY_POLICY). */
export const KEY_POLICY = '{"Version":"2012-10-17","Statement":[{"Sid":"TokenSigning","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:role/Token-A"},"Action":"kms:Sign","Resource":"*"}]}';
export const STACK_ID = 'arn:aws:cloudformation:eu-west-1:111122223333:stack/Test/0a1b2c3d-0000-4000-8000-000000000000';

/** One test's world: call `setUp` in beforeEach and `tearDown` in afterEach. */
export function keyLifecycleWorld() {
  const world = {
    repo: undefined as unknown as SigningKeyRepo,
    fake: undefined as unknown as ReturnType<typeof createFakeKms>,
    now: 0,
    /** What DescribeStacks answers for the stack (a test double of CloudFormation). */
    stackStatus: 'UPDATE_COMPLETE',
    keyPolicy: KEY_POLICY,
    responses: [] as { url: string; response: LifecycleResponse }[],
    table: undefined as unknown as Awaited<ReturnType<typeof freshTable>>,
    async setUp() {
      world.table = await freshTable();
      world.repo = createSigningKeyRepo(world.table);
      world.fake = createFakeKms();
      world.now = Math.floor(Date.now() / 1000);
      world.stackStatus = 'UPDATE_COMPLETE';
      world.keyPolicy = KEY_POLICY;
      world.responses.length = 0;
    },
    tearDown: () => world.table.doc.destroy(),
    clock: () => new Date(world.now * 1000),
    pass: (seconds: number) => { world.now += seconds; },
    store: () => createKmsKeyStore({
      initialKeyId: world.fake.firstKeyArn, keyPolicy: world.keyPolicy, owner: 'Test/stack-id', aliasPrefix: ALIAS_PREFIX,
    }, world.fake.kms),
    step: (mode: RotationOptions['mode']) => rotateSigningKeys({ repo: world.repo, store: world.store(), now: world.clock }, { mode }),
    /** The rotation function's handler over this world (imported when used: the module is the function's). */
    handler: async (deps: Partial<RotationHandlerDeps> = {}) => (await import('#functions/ops/rotate-signing-key')).createRotationHandler(() => ({
      repo: world.repo, store: world.store(), now: world.clock, keyPolicy: world.keyPolicy,
      stackStatus: async () => world.stackStatus,
      respond: async (url, response) => { world.responses.push({ url, response }); },
      ...deps,
    })),
    stackKeyId: () => world.fake.firstKeyArn.split('/').pop()!,
    keyState: () => world.fake.keys().map((key) => ({ kid: key.keyId, state: key.state, aliases: key.aliases })),
  };
  return world;
}

/** A request CloudFormation sends for the lifecycle resource, as the function receives it. */
export function lifecycleEvent(RequestType: LifecycleEvent['RequestType'], teardown: boolean, PhysicalResourceId?: string, policy = KEY_POLICY): LifecycleEvent {
  return {
    RequestType, ResponseURL: 'https://cloudformation-custom-resource-response.example/answer', RequestId: `request-${RequestType}`,
    StackId: STACK_ID, LogicalResourceId: 'SigningKeyLifecycle', ResourceProperties: { TeardownOnDelete: String(teardown), RotatedKeyPolicy: policy },
    ...(PhysicalResourceId ? { PhysicalResourceId } : {}),
  };
}

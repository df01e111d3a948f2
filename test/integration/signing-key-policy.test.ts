import { CreateKeyCommand } from '@aws-sdk/client-kms';
import { PutCommand } from '#shared/data/commands';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signingKeysKey } from '#shared/data/item-keys';
import { PUBLISH_LEAD_SECONDS } from '#shared/keys/schedule';
import { KEY_POLICY, keyLifecycleWorld, lifecycleEvent } from '../support/key-lifecycle';

// A rotated key's policy names the token function's and the rotation's roles by ARN. A role
// CloudFormation replaces gets a new ARN, and a key an earlier version created has another policy:
// the deployment (the lifecycle resource's Create and Update, whose property is that policy) puts the
// current policy on every rotated key the schedule holds. The rotation function over the real table
// (DynamoDB Local) and the KMS stand-in with real RSA keys.

const world = keyLifecycleWorld();
beforeEach(() => world.setUp());
afterEach(() => world.tearDown());

/** The same policy naming other roles, as after CloudFormation replaced them. */
const REPLACED_POLICY = KEY_POLICY.replace('role/Token-A', 'role/Token-B');
const policies = () => world.fake.keys().map((key) => [key.keyId, key.policy]);

describe('the deployment gives every rotated key the current key policy', () => {
  it('an Update with a new policy (a role replaced) puts it on every key the schedule holds, published or waiting, never on the stack\'s own', async () => {
    await (await world.handler())(lifecycleEvent('Create', true));
    const published = (await world.step('now')).introduced!;
    world.pass(PUBLISH_LEAD_SECONDS);
    world.fake.refuseFreshKeys(300);
    const waiting = (await world.step('now')).awaiting!;
    world.fake.refuseFreshKeys(0);
    expect(policies()).toEqual([[world.stackKeyId(), undefined], [published.kid, KEY_POLICY], [waiting.kid, KEY_POLICY]]);

    world.keyPolicy = REPLACED_POLICY;
    const answer = await (await world.handler())(lifecycleEvent('Update', true, 'signing-keys-x', REPLACED_POLICY));

    expect(answer).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: 'signing-keys-x' });
    expect(policies()).toEqual([[world.stackKeyId(), undefined], [published.kid, REPLACED_POLICY], [waiting.kid, REPLACED_POLICY]]);
    // Keys created from then on get it too.
    world.pass(PUBLISH_LEAD_SECONDS);
    const next = (await world.step('now')).introduced!;
    expect(world.fake.keys().find((key) => key.keyId === next.kid)!.policy).toBe(REPLACED_POLICY);
  });

  it('gives a key an earlier version created (KMS\'s default policy, or the one that trusted tagged roles) the current policy at the first deployment of this version', async () => {
    const { KeyMetadata } = await world.fake.kms.send(new CreateKeyCommand({ KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY', Policy: '{"trusts":"tagged roles"}' }));
    await world.table.doc.send(new PutCommand({
      TableName: world.table.table,
      Item: {
        ...signingKeysKey(), version: 1, keys: [
          { kid: world.stackKeyId(), ref: world.fake.firstKeyArn, createdAt: 0, activateAt: 0, retireAt: world.now + 3600 },
          { kid: KeyMetadata!.KeyId, ref: KeyMetadata!.Arn, createdAt: world.now - 3 * 3600, activateAt: world.now - 3600 },
        ],
      },
    }));

    expect(await (await world.handler())(lifecycleEvent('Create', true))).toMatchObject({ Status: 'SUCCESS' });

    expect(world.fake.keys().find((key) => key.keyId === KeyMetadata!.KeyId)!.policy).toBe(KEY_POLICY);
    expect(world.fake.calls.filter((call) => call === 'PutKeyPolicy')).toHaveLength(1);
  });

  it('answers FAILED with the reason when KMS refuses the new policy, so that the update rolls back to the roles that still have it', async () => {
    await (await world.handler())(lifecycleEvent('Create', true));
    const rotated = (await world.step('now')).introduced!;
    const refusing = { ...world.store(), applyKeyPolicy: async () => { throw Object.assign(new Error('Policy contains a statement with one or more invalid principals'), { name: 'MalformedPolicyDocumentException' }); } };

    const answer = await (await world.handler({ store: refusing }))(lifecycleEvent('Update', true, 'signing-keys-x'));

    expect(answer).toMatchObject({ Status: 'FAILED', Reason: expect.stringContaining('MalformedPolicyDocumentException') });
    expect(world.fake.keys().find((key) => key.keyId === rotated.kid)!.policy).toBe(KEY_POLICY);
  });

  it('a rollback to another policy (the roles being undone) is answered SUCCESS without a change, and the next hourly step, with the policy the function then has, puts it on the keys', async () => {
    await (await world.handler())(lifecycleEvent('Create', true));
    const rotated = (await world.step('now')).introduced!;
    world.keyPolicy = REPLACED_POLICY;
    await (await world.handler())(lifecycleEvent('Update', true, 'signing-keys-x', REPLACED_POLICY));
    expect(world.fake.keys().find((key) => key.keyId === rotated.kid)!.policy).toBe(REPLACED_POLICY);

    // A later resource failed: CloudFormation rolls the lifecycle back first, the function's nested stack after it.
    world.stackStatus = 'UPDATE_ROLLBACK_IN_PROGRESS';
    const answer = await (await world.handler())(lifecycleEvent('Update', true, 'signing-keys-x', KEY_POLICY));
    expect(answer).toMatchObject({ Status: 'SUCCESS' });
    expect(world.fake.keys().find((key) => key.keyId === rotated.kid)!.policy).toBe(REPLACED_POLICY);

    world.keyPolicy = KEY_POLICY;
    world.stackStatus = 'UPDATE_ROLLBACK_COMPLETE';
    world.pass(3600);
    await (await world.handler())({ mode: 'when-due' });
    expect(world.fake.keys().find((key) => key.keyId === rotated.kid)!.policy).toBe(KEY_POLICY);
  });

  it('takes CloudFormation\'s request through the lifecycle topic (an SNS record) as a direct one; a request for another copy\'s policy is left to that copy, unanswered', async () => {
    const viaTopic = (policy: string) => ({ Records: [{ EventSource: 'aws:sns', Sns: { Message: JSON.stringify(lifecycleEvent('Create', true, undefined, policy)) } }] });

    expect(await (await world.handler())(viaTopic(KEY_POLICY))).toEqual([expect.objectContaining({ Status: 'SUCCESS', RequestId: 'request-Create' })]);
    expect(world.responses).toHaveLength(1);

    // While CloudFormation moves the function, the old copy is still subscribed and gets the request too.
    const callsBefore = world.fake.calls.length;
    expect(await (await world.handler())(viaTopic(REPLACED_POLICY))).toEqual([undefined]);
    expect(world.responses).toHaveLength(1);
    expect(world.fake.calls.length).toBe(callsBefore);
  });
});

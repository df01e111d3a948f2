import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PUBLISH_LEAD_SECONDS } from '#shared/keys/schedule';
import { tearDownSigningKeys } from '#shared/keys/rotation';
import { createKeyring } from '#shared/keys/keyring';
import { kmsSignerSource } from '#shared/keys/kms-signer';
import { ALIAS_PREFIX, keyLifecycleWorld, lifecycleEvent } from '../support/key-lifecycle';

// CloudFormation sends the lifecycle resource a Delete when the stack is deleted, but also when the
// resource leaves the template or is replaced, and when an update that created it rolls back. Only the
// stack's own status (DescribeStacks; a test double here, CloudFormation has no local engine) tells
// them apart: a live stage must keep signing whatever an update did. The rotation function over the
// real table (DynamoDB Local) and the KMS stand-in with real RSA keys.

const world = keyLifecycleWorld();
beforeEach(() => world.setUp());
afterEach(() => world.tearDown());

/** A dev stage one rotation in: the rotated key signs, the stack's own key retires. */
async function rotatedStage() {
  await (await world.handler())(lifecycleEvent('Create', true));
  const rotated = (await world.step('now')).introduced!;
  world.pass(PUBLISH_LEAD_SECONDS);
  await world.step('when-due');
  return rotated;
}

describe('a rollback never tears down a live stage', () => {
  for (const status of ['UPDATE_ROLLBACK_IN_PROGRESS', 'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS', 'UPDATE_COMPLETE_CLEANUP_IN_PROGRESS', 'UPDATE_IN_PROGRESS']) {
    it(`a Delete while the stack is ${status} (a rollback, a replacement, the resource leaving the template) changes nothing, and the keys keep signing`, async () => {
      const rotated = await rotatedStage();
      const before = world.keyState();
      world.stackStatus = status;

      const answer = await (await world.handler())(lifecycleEvent('Delete', true, 'signing-keys-x'));

      expect(answer).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: 'signing-keys-x' });
      expect(world.keyState()).toEqual(before);
      expect(world.keyState().find((key) => key.kid === rotated.kid)).toMatchObject({ state: 'Enabled', aliases: expect.arrayContaining([`${ALIAS_PREFIX}-current`]) });
      expect((await world.repo.getSchedule(true))!.closedAt).toBeUndefined();
      expect(world.fake.calls).not.toContain('ScheduleKeyDeletion');
      const keyring = createKeyring({ repo: world.repo, source: kmsSignerSource(world.fake.firstKeyArn, world.fake.kms), now: world.clock });
      expect((await keyring.currentSigner()).kid).toBe(rotated.kid);
      // The hourly run goes on as before.
      await expect((await world.handler())({ mode: 'when-due' })).resolves.toMatchObject({ keys: expect.any(Array) });
    });
  }

  it('the upgrade\'s clean-up deletes the resource of an earlier version (its token the function\'s ARN, no key policy property): nothing is torn down', async () => {
    const rotated = await rotatedStage();
    world.stackStatus = 'UPDATE_COMPLETE_CLEANUP_IN_PROGRESS';
    const earlier = lifecycleEvent('Delete', true, 'signing-keys-0a1b2c3d');

    const answer = await (await world.handler())({ ...earlier, LogicalResourceId: 'TokenSigningLifecycle', ResourceProperties: { TeardownOnDelete: 'true' } });

    expect(answer).toMatchObject({ Status: 'SUCCESS', LogicalResourceId: 'TokenSigningLifecycle' });
    expect(world.keyState().find((key) => key.kid === rotated.kid)!.state).toBe('Enabled');
    expect((await world.repo.getSchedule(true))!.closedAt).toBeUndefined();
  });

  it('tears down only once the stack itself is DELETE_IN_PROGRESS', async () => {
    const rotated = await rotatedStage();
    world.stackStatus = 'DELETE_IN_PROGRESS';

    expect(await (await world.handler())(lifecycleEvent('Delete', true, 'signing-keys-x'))).toMatchObject({ Status: 'SUCCESS' });

    expect(world.keyState().find((key) => key.kid === rotated.kid)).toEqual({ kid: rotated.kid, state: 'PendingDeletion', aliases: [] });
    expect((await world.repo.getSchedule(true))!.closedAt).toBe(world.now);
  });

  it('a Delete whose stack status cannot be read tears nothing down and answers FAILED with the reason', async () => {
    const rotated = await rotatedStage();
    const unreadable = async () => { throw new Error('Rate exceeded'); };

    const answer = await (await world.handler({ stackStatus: unreadable }))(lifecycleEvent('Delete', true, 'signing-keys-x'));

    expect(answer).toMatchObject({ Status: 'FAILED', Reason: 'Error: Rate exceeded' });
    expect(world.keyState().find((key) => key.kid === rotated.kid)!.state).toBe('Enabled');
  });

  it('an hourly run that finds the schedule closed while the stack lives fails (the alarm), and says so; while the stack is being deleted it passes', async () => {
    await rotatedStage();
    // What an earlier version did on a rollback's Delete: the schedule closed, the keys pending deletion.
    await tearDownSigningKeys({ repo: world.repo, store: world.store(), now: world.clock });
    world.stackStatus = 'UPDATE_ROLLBACK_COMPLETE';

    for (const mode of ['when-due', 'now'] as const) {
      await expect((await world.handler())({ mode })).rejects.toThrow(/schedule is closed \(torn down\) but the stack is UPDATE_ROLLBACK_COMPLETE/);
    }
    // A report still answers: it is how the operator looks.
    expect(await (await world.handler())({ mode: 'report' })).toMatchObject({ closed: true });

    world.stackStatus = 'DELETE_IN_PROGRESS';
    expect(await (await world.handler())({ mode: 'when-due' })).toMatchObject({ closed: true, introduced: null });
  });
});

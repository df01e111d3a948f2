import { KeyScheduleConflictError, type SigningKeyEntry, type SigningKeyRepo, type UnpublishedKey } from '#shared/data/signing-key-repo';
import { epochSeconds } from '#shared/domain/time';
import { logger } from '#shared/log';
import {
  activeKey, initialKeys, phasesAt, PUBLICATION_WAIT_LIMIT_SECONDS, PUBLISH_LEAD_SECONDS, readPublicJwk, RETIRE_AFTER_SUCCESSOR_SECONDS, ROTATION_PERIOD_DAYS,
  type KeyPhase, type SigningKeyStore,
} from '#shared/keys/schedule';

// The steps that change the schedule of shared/keys/schedule.ts: the rotation (the operator's command,
// the hourly function), the deployment's first record, and the teardown of a deleted stack.

export interface RotationDeps {
  repo: SigningKeyRepo;
  store: SigningKeyStore;
  now?: () => Date;
}

export interface RotationOptions {
  /**
   * 'now': introduce a next key unless one is pending (the operator's command); 'when-due': only once
   * the active key is ROTATION_PERIOD_DAYS old (the schedule); 'init': never create one (the
   * deployment); 'report': change nothing, say where the keys are.
   */
  mode: 'now' | 'when-due' | 'init' | 'report';
}

export interface RotationOutcome {
  /** The key this step published (created by it or by an earlier step), if any. */
  introduced?: SigningKeyEntry;
  /** A key created but not published yet: KMS does not give its public key yet; a later step publishes it. */
  awaiting?: UnpublishedKey;
  /** Retired keys this step dropped from the schedule and deleted (the stack's own key is dropped, never deleted). */
  deleted: SigningKeyEntry[];
  /** The schedule after the step, with each key's phase now. */
  keys: { key: SigningKeyEntry; phase: KeyPhase }[];
  /** The stack is being deleted (tearDownSigningKeys ran): the step changed nothing. */
  closed?: boolean;
}

/** The stack's own key as the first entry of a schedule: active from `now`, so due ROTATION_PERIOD_DAYS later. */
async function ownKeyFrom(store: SigningKeyStore, now: number): Promise<SigningKeyEntry> {
  const jwk = await readPublicJwk(store, store.initialRef);
  return { kid: store.signerFor(store.initialRef).kid, ref: store.initialRef, createdAt: now, activateAt: now, ...(jwk ? { jwk } : {}) };
}

/**
 * One rotation step, the same for the operator's command, the scheduled function and the
 * deployment: deletes the retired keys; publishes the key an earlier step created once its public key
 * can be read; else, unless a key is pending, creates the next key when due. A published key signs
 * from `now + PUBLISH_LEAD_SECONDS`; every key that signs or may sign before it gets `retireAt = its
 * activateAt + RETIRE_AFTER_SUCCESSOR_SECONDS`. The first step on a table without a schedule records
 * the stack's own key as active from now: a fresh deployment rotates ROTATION_PERIOD_DAYS later, never
 * at once. One conditional write per step: a concurrent step fails with KeyScheduleConflictError and
 * nothing of it stays.
 */
export async function rotateSigningKeys(deps: RotationDeps, options: RotationOptions): Promise<RotationOutcome> {
  const now = epochSeconds((deps.now ?? (() => new Date()))());
  const read = await deps.repo.getSchedule(true);
  const waitingBefore = read?.unpublished?.[0];
  if (options.mode === 'report' || read?.closedAt !== undefined) {
    return {
      deleted: [], keys: phasesAt(read?.keys ?? initialKeys(deps.store), now),
      ...(waitingBefore ? { awaiting: waitingBefore } : {}), ...(read?.closedAt !== undefined ? { closed: true } : {}),
    };
  }
  // No schedule yet: the stack's key is recorded as active from now (that write is the step's change).
  let changed = !read;
  let keys = read ? read.keys : [await ownKeyFrom(deps.store, now)];
  const phases = phasesAt(keys, now);
  const retired = phases.filter(({ phase }) => phase === 'retired').map(({ key }) => key);
  // The deployed key stays: the stack owns it, and it signs again should the schedule item be lost.
  const deleted = retired.filter((key) => key.ref !== deps.store.initialRef);
  keys = phases.filter(({ phase }) => phase !== 'retired').map(({ key }) => key);
  changed ||= retired.length > 0;
  // Keys published before their public keys were kept: kept from now on, so the JWKS asks KMS for none.
  keys = await Promise.all(keys.map(async (key) => {
    if (key.jwk) return key;
    const jwk = await readPublicJwk(deps.store, key.ref);
    if (!jwk) return key;
    changed = true;
    return { ...key, jwk };
  }));

  let unpublished = read?.unpublished ?? [];
  let created: { ref: string; kid: string } | undefined;
  let introduced: SigningKeyEntry | undefined;
  const pending = keys.some((key) => key.activateAt > now);
  const active = activeKey(keys, now);
  const due = options.mode === 'now' || (options.mode === 'when-due' && (!active || active.activateAt + ROTATION_PERIOD_DAYS * 86_400 <= now));
  if (!pending && unpublished.length === 0 && due) {
    created = await deps.store.createKey();
    unpublished = [{ ...created, createdAt: now }];
    changed = true;
  }
  const [waiting, ...others] = unpublished;
  if (!pending && waiting) {
    const jwk = await readPublicJwk(deps.store, waiting.ref);
    if (jwk) {
      introduced = { kid: waiting.kid, ref: waiting.ref, createdAt: now, activateAt: now + PUBLISH_LEAD_SECONDS, jwk };
      const retireAt = introduced.activateAt + RETIRE_AFTER_SUCCESSOR_SECONDS;
      keys = [...keys.map((key) => (key.retireAt === undefined ? { ...key, retireAt } : key)), introduced];
      unpublished = others;
      changed = true;
    }
  }
  if (changed) {
    try {
      await deps.repo.saveSchedule({ keys, unpublished }, read?.version ?? 0);
    } catch (error) {
      // Nothing of a failed step stays: the key it created is listed nowhere, so it goes again.
      if (created) await deps.store.deleteKey(created.ref).catch(() => undefined);
      throw error;
    }
    // Deleted only once no schedule lists them; a failure here leaves a key nothing uses (deleted by hand).
    for (const key of deleted) await deps.store.deleteKey(key.ref);
  }
  // Every step, so that `current` follows the switch (made by the clock) within one scheduled run.
  const after = phasesAt(keys, now);
  const current = after.find(({ phase }) => phase === 'active')?.key.ref;
  const next = after.find(({ phase }) => phase === 'pending')?.key.ref;
  if (current && deps.store.pointAliases) {
    try {
      await deps.store.pointAliases({ current, ...(next ? { next } : {}) });
    } catch (error) {
      // At deployment a permission may not apply yet: the names are the operators' only, and the next
      // hourly step points them. Elsewhere the step fails, so that a lasting denial is seen.
      if (options.mode !== 'init') throw error;
      logger.warn('The signing-key aliases could not be pointed at deployment; the next step points them', { error: error as Error });
    }
  }
  const awaiting = unpublished[0];
  if (awaiting && now - awaiting.createdAt >= PUBLICATION_WAIT_LIMIT_SECONDS) {
    throw new Error(`KMS has not given the public key of signing key ${awaiting.kid} since ${new Date(awaiting.createdAt * 1000).toISOString()}: `
      + 'check that the rotation function may call kms:GetPublicKey on the keys it creates (their key policy). Each step tries again.');
  }
  return { ...(introduced ? { introduced } : {}), ...(awaiting ? { awaiting } : {}), deleted, keys: after };
}

/**
 * The deployment's step (the stack's lifecycle resource, on Create and Update): first gives every
 * rotated key the schedule holds the current key policy (applyKeyPolicies); then on a fresh stack it
 * records the stack's own key, with its public key, as active from now, so it is due for rotation
 * ROTATION_PERIOD_DAYS after the deployment, and points `…-current` at it; on a stack that has a
 * schedule it keeps it, completing what is missing (public keys, aliases). It never creates a key.
 */
export async function initSigningKeys(deps: RotationDeps): Promise<RotationOutcome & { policiesApplied: string[] }> {
  const policiesApplied = await applyKeyPolicies(deps);
  return { ...(await rotateSigningKeys(deps, { mode: 'init' })), policiesApplied };
}

/**
 * Gives every key a rotation created that the schedule still holds (published or waiting, never the
 * stack's own) the key policy the store creates keys with now, and returns their references. The
 * deployment runs it first: a rotated key's policy names the roles that may use it by ARN, and a role
 * CloudFormation replaced, or a key an earlier version created with another policy, would otherwise
 * lock the functions out of it. Nothing on a closed schedule (its keys are pending deletion).
 */
export async function applyKeyPolicies(deps: RotationDeps): Promise<string[]> {
  const read = await deps.repo.getSchedule(true);
  if (!read || read.closedAt !== undefined || !deps.store.applyKeyPolicy) return [];
  const refs = [...read.keys.map((key) => key.ref), ...(read.unpublished ?? []).map((key) => key.ref)].filter((ref) => ref !== deps.store.initialRef);
  for (const ref of refs) await deps.store.applyKeyPolicy(ref);
  return refs;
}

/**
 * The stack's deletion (the lifecycle resource, on Delete while the stack is being deleted, for a
 * stage that keeps no data; never on a rollback or a replacement of the resource): closes
 * the schedule, so that no later step creates a key, then deletes (KMS: schedules the deletion of)
 * every key a rotation created, published or not, and the aliases. The stack's own key is left to
 * CloudFormation. Running it again finds the keys pending deletion and the aliases gone: no error.
 */
export async function tearDownSigningKeys(deps: RotationDeps): Promise<{ deleted: string[] }> {
  const now = epochSeconds((deps.now ?? (() => new Date()))());
  let refs: string[] = [];
  for (let attempt = 1; ; attempt++) {
    const read = await deps.repo.getSchedule(true);
    const keys = read?.keys ?? [await ownKeyFrom(deps.store, now)];
    const unpublished = read?.unpublished ?? [];
    refs = [...keys.map((key) => key.ref), ...unpublished.map((key) => key.ref)].filter((ref) => ref !== deps.store.initialRef);
    if (read?.closedAt !== undefined) break;
    try {
      await deps.repo.saveSchedule({ keys, unpublished, closedAt: now }, read?.version ?? 0);
      break;
    } catch (error) {
      // A scheduled step wrote meanwhile: read what it wrote (it may have created a key) and close that.
      if (!(error instanceof KeyScheduleConflictError) || attempt >= 3) throw error;
    }
  }
  for (const ref of refs) await deps.store.deleteKey(ref);
  await deps.store.deleteAliases?.();
  return { deleted: refs };
}

/** The outcome as an operator reads it: one line per key with its phase and times (UTC). */
export function describeRotation(outcome: RotationOutcome): string[] {
  const at = (seconds: number | undefined) => (seconds === undefined ? '-' : new Date(seconds * 1000).toISOString());
  return [
    outcome.closed ? 'The signing keys are torn down (the stack is being deleted): nothing changed.'
      : outcome.introduced ? `Introduced key ${outcome.introduced.kid}: published now, signs from ${at(outcome.introduced.activateAt)}.`
        : outcome.awaiting ? `Key ${outcome.awaiting.kid} was created at ${at(outcome.awaiting.createdAt)}; KMS does not give its public key yet, a later step publishes it.`
          : 'No key introduced: a key is pending, or the active key is not due for rotation.',
    ...outcome.deleted.map((key) => `Deleted retired key ${key.kid} (KMS: scheduled for deletion).`),
    ...outcome.keys.map(({ key, phase }) => `  ${phase.padEnd(8)} ${key.kid}  signs from ${at(key.activateAt)}  retires ${at(key.retireAt)}`),
  ];
}

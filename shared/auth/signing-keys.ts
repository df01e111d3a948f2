import { ACCESS_TOKEN_TTL_SECONDS } from '#shared/auth/access-token';
import type { TokenSigner } from '#shared/auth/signer';
import { KeyScheduleConflictError, type SigningKeyEntry, type SigningKeyRepo, type UnpublishedKey } from '#shared/data/signing-key-repo';
import type { PublicJwk } from '#shared/domain/jwk';
import { epochSeconds } from '#shared/domain/time';
import { logger } from '#shared/log';

// Signing-key rotation without downtime. The schedule (one table item, signing-key-repo.ts) lists
// every key that may have signed a live token, each with the time it starts signing (`activateAt`)
// and, once a successor exists, the time it stops being published (`retireAt`). A key's phase follows
// from the clock alone, so a rotation is ONE write, made when the next key is introduced:
//
//   pending   published in the JWKS, not signing yet          createdAt <= now < activateAt
//   active    signs every new token (the latest activated)    activateAt <= now
//   retiring  published, no longer signing                    successor active, now < retireAt
//   retired   not published; the next rotation deletes it     retireAt <= now
//
// Every function switches at the same instant without reading anything new, and the waits below make
// both ends safe whatever the caches hold.
//
// A new KMS key may be refused for minutes after its creation: "the AWS KMS API follows an eventual
// consistency model", a change "can take several minutes" to propagate, with errors "such as a
// NotFoundException" meanwhile, even right after CreateKey (AWS KMS Developer Guide, "AWS KMS
// eventual consistency"); and "it might take up to five minutes for tag and alias changes to affect
// KMS key authorization" ("Use tags to control access to KMS keys"). So no step depends on a key it
// has just created: the step that creates a key records it as unpublished
// and tries once to read its public key; the key is published (and its 2 hours start) only by the
// step that could read it, this one or a later one. Each key's public key is kept in the schedule, so
// the JWKS makes no KMS call. The deployment records the stack's own key as active from the moment
// it was deployed (initSigningKeys), so its first rotation is ROTATION_PERIOD_DAYS later, and the
// stack's deletion deletes what rotations created (tearDownSigningKeys).

/**
 * API Gateway's JWT authorizer "caches each issuer's signing keys for up to 1 hour on a best-effort
 * basis" and fetches the key set again for a token signed by a key it has not seen ("Signing keys and
 * troubleshooting JWT authorizers", API Gateway Developer Guide,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/rest-api-jwt-authorizer-keys.html).
 */
export const AUTHORIZER_JWKS_CACHE_SECONDS = 3600;
/** `cache-control: max-age` of the JWKS response, for other verifiers and shared caches. */
export const JWKS_MAX_AGE_SECONDS = 300;
/** How long a function instance keeps the schedule it read (the token endpoint and the JWKS). */
export const KEY_SCHEDULE_CACHE_SECONDS = 60;
/** Clock difference between function instances that the waits absorb. */
const CLOCK_MARGIN_SECONDS = 300;
/**
 * Publish before sign: a new key starts signing this long after it is introduced, longer than the
 * longest chain of caches a verifier may see it through (a function's schedule cache, the JWKS
 * max-age, then the authorizer's hour): 2 h > 60 s + 300 s + 3600 s + the clock margin.
 */
export const PUBLISH_LEAD_SECONDS = 2 * 3600;
/**
 * Retire after the last token expired: the old key signs nothing from its successor's `activateAt` on
 * (every instance read the schedule long before: the lead is hours, the cache a minute), so its
 * last token expires within the access-token lifetime of it.
 */
export const RETIRE_AFTER_SUCCESSOR_SECONDS = ACCESS_TOKEN_TTL_SECONDS + CLOCK_MARGIN_SECONDS;
/** The scheduled rotation introduces a next key once the active one has signed this long. */
export const ROTATION_PERIOD_DAYS = 90;
/**
 * A created key whose public key KMS still refuses this long after its creation is not waiting for a
 * permission to apply (minutes) but misconfigured: the step fails (the Lambda error alarm) until an
 * operator sees to it, and keeps retrying it.
 */
export const PUBLICATION_WAIT_LIMIT_SECONDS = 24 * 3600;

export type KeyPhase = 'pending' | 'active' | 'retiring' | 'retired';

/** Turns key references (KMS key ARN, local key file) into signers. */
export interface SignerSource {
  /** The key deployed with the service (the stack's KMS key, the local key file): the only one before a first rotation. */
  readonly initialRef: string;
  signerFor(ref: string): TokenSigner;
}

/** A signer source that can also create and delete keys: what a rotation needs. */
export interface SigningKeyStore extends SignerSource {
  /**
   * Creates a key (KMS: CreateKey, RSA_2048 SIGN_VERIFY; locally a key file) and returns its
   * reference and `kid`, both from the creation's answer: nothing else is asked of the new key.
   */
  createKey(): Promise<{ ref: string; kid: string }>;
  /** Deletes a key (KMS: ScheduleKeyDeletion); deleting one already gone or pending deletion is no error. */
  deleteKey(ref: string): Promise<void>;
  /** Points the operators' names at the active and the pending key (KMS aliases `…-current`, `…-next`); absent locally. */
  pointAliases?(aliases: { current: string; next?: string }): Promise<void>;
  /** Deletes those names (the teardown); deleting one that does not exist is no error. */
  deleteAliases?(): Promise<void>;
}

/** The phase of each key at `now` (epoch seconds). */
export function phasesAt(keys: readonly SigningKeyEntry[], now: number): { key: SigningKeyEntry; phase: KeyPhase }[] {
  const active = activeKey(keys, now);
  return keys.map((key) => ({
    key,
    phase: key === active ? 'active'
      : key.activateAt > now ? 'pending'
        : key.retireAt !== undefined && key.retireAt <= now ? 'retired' : 'retiring',
  }));
}

/** The key that signs at `now`: the latest one whose time has come and that is not retired. */
function activeKey(keys: readonly SigningKeyEntry[], now: number): SigningKeyEntry | undefined {
  return keys
    .filter((key) => key.activateAt <= now && !(key.retireAt !== undefined && key.retireAt <= now))
    .reduce<SigningKeyEntry | undefined>((latest, key) => (!latest || key.activateAt > latest.activateAt ? key : latest), undefined);
}

/** What the functions assume while no schedule exists: the deployed key, active since forever. */
function initialKeys(source: SignerSource): SigningKeyEntry[] {
  return [{ kid: source.signerFor(source.initialRef).kid, ref: source.initialRef, createdAt: 0, activateAt: 0 }];
}

/**
 * The public key of `ref`, or undefined while KMS refuses it (a new key's permissions may take
 * minutes to apply) or cannot answer: the caller tries again on a later step.
 */
async function readPublicJwk(source: SignerSource, ref: string): Promise<PublicJwk | undefined> {
  try {
    return await source.signerFor(ref).publicJwk();
  } catch (error) {
    logger.warn('The public key of a signing key could not be read yet; a later step tries again', { ref, error: error as Error });
    return undefined;
  }
}

export interface KeyringDeps {
  repo: Pick<SigningKeyRepo, 'getSchedule'>;
  source: SignerSource;
  /** The clock; tests move it. */
  now?: () => Date;
}

export type Keyring = ReturnType<typeof createKeyring>;

/**
 * The keys as a function sees them: the signer of the active key (token endpoint) and the public
 * keys to publish (JWKS). The schedule is read at most once per KEY_SCHEDULE_CACHE_SECONDS per
 * instance, so the token endpoint keeps its two DynamoDB requests per call (plus one GetItem per
 * instance per minute). That is safe because no change takes effect sooner than hours after it is
 * written: a pending key starts signing PUBLISH_LEAD_SECONDS later, and the phases are computed from
 * the clock at each call, not from what was read.
 */
export function createKeyring(deps: KeyringDeps) {
  const now = deps.now ?? (() => new Date());
  let cached: { keys: Promise<SigningKeyEntry[]>; readAt: number } | undefined;

  function keys(): Promise<SigningKeyEntry[]> {
    const at = now().getTime();
    if (!cached || at - cached.readAt >= KEY_SCHEDULE_CACHE_SECONDS * 1000 || at < cached.readAt) {
      const read = deps.repo.getSchedule().then((schedule) => (schedule ? schedule.keys : initialKeys(deps.source)));
      const entry = { keys: read, readAt: at };
      cached = entry;
      read.catch(() => {
        if (cached === entry) cached = undefined;
      });
    }
    return cached.keys;
  }

  return {
    /** The signer of the key that is active now. */
    async currentSigner(): Promise<TokenSigner> {
      const key = activeKey(await keys(), epochSeconds(now()));
      if (!key) throw new Error('No signing key is active: the signing-key schedule lists none whose time has come');
      return deps.source.signerFor(key.ref);
    },

    /**
     * The public keys to publish now: every key that is not retired (the active one first), from the
     * schedule. Only a key the schedule holds no public key of (no schedule yet, or one written before
     * they were kept) is asked of KMS; one KMS refuses is left out rather than failing the whole set,
     * unless none is left.
     */
    async publishedKeys(): Promise<PublicJwk[]> {
      const order: Record<KeyPhase, number> = { active: 0, pending: 1, retiring: 2, retired: 3 };
      const published = phasesAt(await keys(), epochSeconds(now()))
        .filter(({ phase }) => phase !== 'retired')
        .sort((a, b) => order[a.phase] - order[b.phase]);
      const read = await Promise.allSettled(published.map(({ key }) => key.jwk ?? deps.source.signerFor(key.ref).publicJwk()));
      const jwks = read.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      const failed = read.flatMap((result, i) => (result.status === 'rejected' ? [{ ref: published[i]!.key.ref, error: result.reason as Error }] : []));
      if (failed.length > 0 && jwks.length === 0) throw failed[0]!.error;
      for (const { ref, error } of failed) logger.warn('A published signing key is left out of the JWKS: KMS did not give its public key', { ref, error });
      return jwks;
    },
  };
}

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
 * The deployment's step (the stack's lifecycle resource, on Create and Update): on a fresh stack it
 * records the stack's own key, with its public key, as active from now, so it is due for rotation
 * ROTATION_PERIOD_DAYS after the deployment, and points `…-current` at it; on a stack that has a
 * schedule it keeps it, completing what is missing (public keys, aliases). It never creates a key.
 */
export function initSigningKeys(deps: RotationDeps): Promise<RotationOutcome> {
  return rotateSigningKeys(deps, { mode: 'init' });
}

/**
 * The stack's deletion (the lifecycle resource, on Delete, for a stage that keeps no data): closes
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

import { ACCESS_TOKEN_TTL_SECONDS } from '#shared/auth/access-token';
import type { PublicJwk, TokenSigner } from '#shared/auth/signer';
import type { SigningKeyEntry, SigningKeyRepo, SigningKeySchedule } from '#shared/data/signing-key-repo';
import { epochSeconds } from '#shared/domain/time';

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

export type KeyPhase = 'pending' | 'active' | 'retiring' | 'retired';

/** Turns key references (KMS key ARN, local key file) into signers. */
export interface SignerSource {
  /** The key deployed with the service (the stack's KMS key, the local key file): the only one before a first rotation. */
  readonly initialRef: string;
  signerFor(ref: string): TokenSigner;
}

/** A signer source that can also create and delete keys: what a rotation needs. */
export interface SigningKeyStore extends SignerSource {
  /** Creates a key (KMS: CreateKey, RSA_2048 SIGN_VERIFY; locally a key file) and returns its reference. */
  createKey(): Promise<string>;
  /** Deletes a retired key (KMS: ScheduleKeyDeletion); deleting one already gone is no error. */
  deleteKey(ref: string): Promise<void>;
  /** Points the operators' names at the active and the pending key (KMS aliases `…-current`, `…-next`); absent locally. */
  pointAliases?(aliases: { current: string; next?: string }): Promise<void>;
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

/** The schedule before any rotation: the deployed key, active since forever. */
function initialKeys(source: SignerSource): SigningKeyEntry[] {
  return [{ kid: source.signerFor(source.initialRef).kid, ref: source.initialRef, createdAt: 0, activateAt: 0 }];
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

    /** The public keys to publish now: every key that is not retired (the active one first). */
    async publishedKeys(): Promise<PublicJwk[]> {
      const order: Record<KeyPhase, number> = { active: 0, pending: 1, retiring: 2, retired: 3 };
      const published = phasesAt(await keys(), epochSeconds(now()))
        .filter(({ phase }) => phase !== 'retired')
        .sort((a, b) => order[a.phase] - order[b.phase]);
      return Promise.all(published.map(({ key }) => deps.source.signerFor(key.ref).publicJwk()));
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
   * the active key is ROTATION_PERIOD_DAYS old (the schedule); 'report': change nothing, say where the keys are.
   */
  mode: 'now' | 'when-due' | 'report';
}

export interface RotationOutcome {
  /** The key introduced by this step, if any. */
  introduced?: SigningKeyEntry;
  /** Retired keys this step dropped from the schedule and deleted (the stack's own key is dropped, never deleted). */
  deleted: SigningKeyEntry[];
  /** The schedule after the step, with each key's phase now. */
  keys: { key: SigningKeyEntry; phase: KeyPhase }[];
}

/**
 * One rotation step, the same for the operator's command and the scheduled function: deletes the
 * retired keys, then (unless a key is already pending) introduces the next key. The new key is
 * published at once and signs from `now + PUBLISH_LEAD_SECONDS`; every key that signs or may sign
 * before it gets `retireAt = its activateAt + RETIRE_AFTER_SUCCESSOR_SECONDS`. One conditional
 * write: a concurrent rotation fails with KeyScheduleConflictError and nothing of it stays.
 */
export async function rotateSigningKeys(deps: RotationDeps, options: RotationOptions): Promise<RotationOutcome> {
  const now = epochSeconds((deps.now ?? (() => new Date()))());
  const schedule: SigningKeySchedule = (await deps.repo.getSchedule(true)) ?? { keys: initialKeys(deps.store), version: 0 };
  const phases = phasesAt(schedule.keys, now);
  if (options.mode === 'report') return { deleted: [], keys: phases };
  const retired = phases.filter(({ phase }) => phase === 'retired').map(({ key }) => key);
  // The deployed key stays: the stack owns it, and it signs again should the schedule item be lost.
  const deleted = retired.filter((key) => key.ref !== deps.store.initialRef);
  let keys = phases.filter(({ phase }) => phase !== 'retired').map(({ key }) => key);

  const active = activeKey(keys, now);
  const pending = phases.some(({ phase }) => phase === 'pending');
  const due = options.mode === 'now' || !active || active.activateAt + ROTATION_PERIOD_DAYS * 86_400 <= now;
  let introduced: SigningKeyEntry | undefined;
  if (!pending && due) {
    const ref = await deps.store.createKey();
    introduced = { kid: deps.store.signerFor(ref).kid, ref, createdAt: now, activateAt: now + PUBLISH_LEAD_SECONDS };
    const retireAt = introduced.activateAt + RETIRE_AFTER_SUCCESSOR_SECONDS;
    keys = [...keys.map((key) => (key.retireAt === undefined ? { ...key, retireAt } : key)), introduced];
  }
  if (introduced || retired.length > 0) {
    try {
      await deps.repo.saveSchedule(keys, schedule.version);
    } catch (error) {
      // Nothing of a failed step stays: the key it created is never published.
      if (introduced) await deps.store.deleteKey(introduced.ref).catch(() => undefined);
      throw error;
    }
    // Deleted only once no schedule lists them; a failure here leaves a key nothing uses (deleted by hand).
    for (const key of deleted) await deps.store.deleteKey(key.ref);
  }
  // Every step, so that `current` follows the switch (made by the clock) within one scheduled run.
  const after = phasesAt(keys, now);
  const current = after.find(({ phase }) => phase === 'active')?.key.ref;
  const next = after.find(({ phase }) => phase === 'pending')?.key.ref;
  if (current && deps.store.pointAliases) await deps.store.pointAliases({ current, ...(next ? { next } : {}) });
  return { ...(introduced ? { introduced } : {}), deleted, keys: after };
}

/** The outcome as an operator reads it: one line per key with its phase and times (UTC). */
export function describeRotation(outcome: RotationOutcome): string[] {
  const at = (seconds: number | undefined) => (seconds === undefined ? '-' : new Date(seconds * 1000).toISOString());
  return [
    outcome.introduced
      ? `Introduced key ${outcome.introduced.kid}: published now, signs from ${at(outcome.introduced.activateAt)}.`
      : 'No key introduced: a key is pending, or the active key is not due for rotation.',
    ...outcome.deleted.map((key) => `Deleted retired key ${key.kid} (KMS: scheduled for deletion).`),
    ...outcome.keys.map(({ key, phase }) => `  ${phase.padEnd(8)} ${key.kid}  signs from ${at(key.activateAt)}  retires ${at(key.retireAt)}`),
  ];
}

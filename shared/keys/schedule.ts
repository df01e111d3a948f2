import type { TokenSigner } from '#shared/keys/signer';
import type { SigningKeyEntry } from '#shared/data/signing-key-repo';
import type { PublicJwk } from '#shared/domain/jwk';
import { logger } from '#shared/log';
import { ACCESS_TOKEN_TTL_SECONDS } from '#shared/domain/grant';

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
  /**
   * Gives a key created earlier the key policy this store creates keys with (KMS: PutKeyPolicy), so
   * that it names the roles of this deployment; absent locally, where a key file has no policy.
   */
  applyKeyPolicy?(ref: string): Promise<void>;
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
export function activeKey(keys: readonly SigningKeyEntry[], now: number): SigningKeyEntry | undefined {
  return keys
    .filter((key) => key.activateAt <= now && !(key.retireAt !== undefined && key.retireAt <= now))
    .reduce<SigningKeyEntry | undefined>((latest, key) => (!latest || key.activateAt > latest.activateAt ? key : latest), undefined);
}

/** What the functions assume while no schedule exists: the deployed key, active since forever. */
export function initialKeys(source: SignerSource): SigningKeyEntry[] {
  return [{ kid: source.signerFor(source.initialRef).kid, ref: source.initialRef, createdAt: 0, activateAt: 0 }];
}

/**
 * The public key of `ref`, or undefined while KMS refuses it (a new key's permissions may take
 * minutes to apply) or cannot answer: the caller tries again on a later step.
 */
export async function readPublicJwk(source: SignerSource, ref: string): Promise<PublicJwk | undefined> {
  try {
    return await source.signerFor(ref).publicJwk();
  } catch (error) {
    logger.warn('The public key of a signing key could not be read yet; a later step tries again', { ref, error: error as Error });
    return undefined;
  }
}

import type { TokenSigner } from '#shared/keys/signer';
import type { SigningKeyEntry, SigningKeyRepo } from '#shared/data/signing-key-repo';
import type { PublicJwk } from '#shared/domain/jwk';
import { epochSeconds } from '#shared/domain/time';
import { logger } from '#shared/log';
import { activeKey, initialKeys, KEY_SCHEDULE_CACHE_SECONDS, phasesAt, type KeyPhase, type SignerSource } from '#shared/keys/schedule';

// What a function reads of the signing keys (the schedule of shared/keys/schedule.ts): the token
// endpoint's signer of the moment and the JWKS's public keys.

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

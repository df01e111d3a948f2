import { createClientCache } from '#shared/oauth/client-cache';
import { audience, doc, grants, issuer, table } from '#shared/auth/runtime';
import { keyringFromEnv } from '#shared/keys/signer-from-env';
import { createTokenService } from '#shared/oauth/token-service';

/** The keys of the token endpoint: it signs with the active one (kms:Sign in AWS). */
export const keyring = keyringFromEnv({ doc, table });

/** Starts reading the signing-key schedule if the cached one is stale (token-endpoint.ts, prefetchSigner). */
export const prefetchSigner = () => keyring.currentSigner();

/** The token service of the token endpoint: the one function that signs, and the one that caches client items (client-cache.ts). */
export const tokens = createTokenService({ grants, signer: () => keyring.currentSigner(), issuer, audience, clientCache: createClientCache() });

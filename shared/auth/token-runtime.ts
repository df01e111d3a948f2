import { audience, grants, issuer } from '#shared/auth/runtime';
import { signerFromEnv } from '#shared/auth/signer-from-env';
import { createTokenService } from '#shared/auth/token-service';

/** The token service of the token endpoint: the one function that signs (kms:Sign in AWS). */
export const tokens = createTokenService({ grants, signer: signerFromEnv(), issuer, audience });

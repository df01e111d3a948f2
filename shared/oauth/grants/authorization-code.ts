import { createHash } from 'node:crypto';
import type { ClientCredentials } from '#shared/oauth/client-auth';
import { CLIENT_AUTHENTICATION_USES, consentStands, revokeFamily, type GrantContext, type TokenResponse } from '#shared/oauth/grant-context';
import { grantTokenNames, newGrantToken, type GrantTokenNames } from '#shared/oauth/grant-tokens';
import { GrantWriteError } from '#shared/data/grant-repo';
import type { Consent, GrantItem } from '#shared/domain/grant';
import { InvalidGrantError } from '#shared/errors';
import { hashSecret, safeEqual } from '#shared/secrets';
import type { Uses, UsesDeclaration } from '#shared/data/uses';

/** Attempts of a code exchange that met a revocation's transaction holding the code. */
const REDEMPTION_ATTEMPTS = 4;

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

export interface CodeExchange {
  code: string;
  redirectUri: string;
  codeVerifier?: string;
}

/** The repository operations exchangeCode uses (the token endpoint's grants: functions/needs.ts). */
export const EXCHANGE_CODE_USES = [
  CLIENT_AUTHENTICATION_USES, { grants: ['getCodeClientAndConsent', 'redeemCode', 'revokeFamily'] },
] as const satisfies UsesDeclaration;
type Context = GrantContext<Uses<typeof EXCHANGE_CODE_USES>>;

/**
 * grant_type=authorization_code (docs/api.md#token-request-authorization-code; RFC 6749 §4.1.3,
 * RFC 7636). Two DynamoDB requests: BatchGetItem of the code (in its family's item), the client
 * (unless withClient has it) and the consent; UpdateItem that makes the code its family, on condition
 * that it is still pending. The access token is signed before the code is spent: if signing fails,
 * nothing is written. Of concurrent exchanges each signs, one wins the write, and the others,
 * finding the code spent, revoke the family it became (a replay).
 */
export function exchangeCode(ctx: Context, credentials: ClientCredentials, form: CodeExchange): Promise<TokenResponse> {
  const names = grantTokenNames(form.code);
  return ctx.withClient(credentials,
    (readClient) => ctx.grants.getCodeClientAndConsent(names?.familyId, credentials.clientId, names?.userId, readClient),
    ({ code, consent }) => redeem(ctx, credentials, form, names, code, consent));
}

/** The code exchange once the client is authenticated: `stored` and `consent` as read with it. */
async function redeem(
  ctx: Context, credentials: ClientCredentials, form: CodeExchange,
  names: GrantTokenNames | undefined, stored: GrantItem | undefined, consent: Consent | undefined,
): Promise<TokenResponse> {
  const codeHash = hashSecret(form.code);
  const invalid = () => new InvalidGrantError('The authorization code is invalid, expired or already used.');
  // The hash covers the whole value, user id included: a code that names a family but is not its code matches none.
  if (!names || !stored || stored.clientId !== credentials.clientId || !stored.codeHash || !safeEqual(stored.codeHash, codeHash)) {
    throw invalid();
  }
  if (stored.status !== 'pending') {
    // RFC 6749 §4.1.2: a replayed code revokes what it produced (the family keeps the code's hash).
    if (stored.status === 'active') await revokeFamily(ctx.grants, stored.familyId, ctx.now(), 'code_replay');
    throw invalid();
  }
  const code = ctx.live(stored);
  if (!code) throw invalid();
  if (form.redirectUri !== code.redirectUri) {
    throw new InvalidGrantError('redirect_uri does not match the authorization request.');
  }
  if (code.codeChallenge !== undefined || form.codeVerifier !== undefined) {
    if (code.codeChallenge === undefined || form.codeVerifier === undefined || !CODE_VERIFIER.test(form.codeVerifier)
      || !safeEqual(createHash('sha256').update(form.codeVerifier).digest('base64url'), code.codeChallenge)) {
      throw new InvalidGrantError('PKCE verification failed.');
    }
  }
  // The user revoked the application (or authorized it again) since the code was issued.
  if (!consentStands(consent, code)) throw invalid();
  // Less any scope the user has taken away since (the account page's grant page).
  const scopes = code.scopes.filter((scope) => consent!.scopes.includes(scope));
  if (scopes.length === 0) throw invalid();

  const accessToken = await ctx.signAccessToken(code.userId, code.clientId, scopes);
  const refreshToken = newGrantToken(code.userId, code.familyId);
  for (let attempt = 1; ; attempt++) {
    try {
      await ctx.grants.redeemCode(code.familyId, codeHash, hashSecret(refreshToken), ctx.now());
      return ctx.respond(accessToken, scopes, refreshToken);
    } catch (error) {
      if (!(error instanceof GrantWriteError)) throw error;
      if (error.reason === 'code_used') {
        // Another exchange of the same code won since the read (a replay: its family is revoked),
        // or a revocation ended the code, or it expired (revoking it then changes nothing).
        await revokeFamily(ctx.grants, code.familyId, ctx.now(), 'code_replay');
        throw invalid();
      }
      if (attempt >= REDEMPTION_ATTEMPTS) throw error;
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
    }
  }
}

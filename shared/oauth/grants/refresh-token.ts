import type { ClientCredentials } from '#shared/oauth/client-auth';
import { CLIENT_AUTHENTICATION_USES, consentStands, revokeFamily, type GrantContext, type TokenResponse } from '#shared/oauth/grant-context';
import { grantTokenNames, newGrantToken, type GrantTokenNames } from '#shared/oauth/grant-tokens';
import { openWith, sealWith } from '#shared/oauth/sealing';
import { GrantWriteError } from '#shared/data/grant-repo';
import type { Consent, GrantItem, TokenFamily } from '#shared/domain/grant';
import { parseScopeString } from '#shared/domain/scopes';
import { InvalidGrantError, InvalidScopeError } from '#shared/errors';
import { countMetric, METRIC } from '#shared/metrics';
import { hashSecret } from '#shared/secrets';
import type { Uses, UsesDeclaration } from '#shared/data/uses';

const ROTATION_ATTEMPTS = 8;

export interface RefreshRequest {
  refreshToken: string;
  scope?: string;
}

/** The repository operations refreshTokens uses (the token endpoint's grants: functions/needs.ts). */
export const REFRESH_USES = [
  CLIENT_AUTHENTICATION_USES, { grants: ['getFamily', 'rotateRefreshToken', 'revokeFamily'] },
] as const satisfies UsesDeclaration;
type Context = GrantContext<Uses<typeof REFRESH_USES>>;

/**
 * grant_type=refresh_token (docs/api.md#token-request-refresh; RFC 6749 §6): rotates the token (two
 * DynamoDB requests: BatchGetItem of the family, the client (unless withClient has it) and the
 * consent; UpdateItem of the family, on condition that the presented token is still its current
 * one). The previous token, presented again however late, gets that same successor as long as the
 * successor is unused (is still the current token: a lost answer must not unlink the user); any
 * other token of the family presented again is reuse and revokes the family (RFC 9700 §4.14.2). The
 * access token is signed before the rotation is written (and only once, however many attempts a
 * race takes): if signing fails, nothing is.
 */
export function refreshTokens(ctx: Context, credentials: ClientCredentials, form: RefreshRequest): Promise<TokenResponse> {
  const names = grantTokenNames(form.refreshToken);
  return ctx.withClient(credentials,
    (readClient) => ctx.grants.getFamilyClientAndConsent(names?.familyId, credentials.clientId, names?.userId, readClient),
    ({ family, consent }) => rotate(ctx, credentials, form, names, family, consent));
}

/** The rotation once the client is authenticated: `stored` and `consent` as read with it. */
async function rotate(
  ctx: Context, credentials: ClientCredentials, form: RefreshRequest,
  names: GrantTokenNames | undefined, stored: GrantItem | undefined, consent: Consent | undefined,
): Promise<TokenResponse> {
  const presentedHash = hashSecret(form.refreshToken);
  const invalid = () => new InvalidGrantError('The refresh token is invalid or has been revoked.');
  // A revoked family past its TTL (REVOKED_GRANT_SECONDS) is unknown: refused, and nothing else.
  const first = ctx.live(stored);
  if (!names || !first || first.clientId !== credentials.clientId || first.userId !== names.userId) throw invalid();
  // The scopes the family was issued, less those the user has since taken away (the account page's grant page).
  const granted = consent ? first.scopes.filter((scope) => consent.scopes.includes(scope)) : first.scopes;
  if (granted.length === 0) throw invalid();
  const scopes = narrowScopes(granted, form.scope);

  // Every attempt acts for the same user, client and scopes: one token serves them all.
  let accessToken: Promise<string> | undefined;
  const signOnce = () => (accessToken ??= ctx.signAccessToken(first.userId, first.clientId, scopes));

  let family: GrantItem | undefined = first;
  for (let attempt = 0; attempt < ROTATION_ATTEMPTS && family?.status === 'active'; attempt++) {
    if (!consentStands(consent, family)) {
      // The user revoked the application (or authorized it again) and the revocation's Query
      // missed this family (index lag): it ends here, with its TTL.
      await revokeFamily(ctx.grants, family.familyId, ctx.now(), 'user_revoked');
      throw invalid();
    }
    if (family.activeTokenHash === presentedHash) {
      const signed = await signOnce();
      const next = newGrantToken(family.userId, family.familyId);
      try {
        await ctx.grants.rotateRefreshToken(family.familyId, presentedHash, hashSecret(next), sealWith(form.refreshToken, next), ctx.now().getTime());
        return ctx.respond(signed, scopes, next);
      } catch (error) {
        if (!(error instanceof GrantWriteError)) throw error;
        // Lost a race with a concurrent rotation of the same token (or a revocation): look again.
        if (error.reason === 'conflict') await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
        family = await ctx.grants.getFamily(family.familyId);
        continue;
      }
    }
    const successor = unusedSuccessor(family, presentedHash, form.refreshToken);
    if (successor) return ctx.respond(await signOnce(), scopes, successor);
    // Reuse: a token of this family that is neither current nor the one its unused current token replaced.
    countMetric(METRIC.refreshTokenReuse);
    await revokeFamily(ctx.grants, family.familyId, ctx.now(), 'refresh_token_reuse');
    throw invalid();
  }
  throw invalid();
}

/**
 * The successor a retry of the previous token gets again: the presented token is the one the last
 * rotation replaced, so its successor is the family's current token, which nobody has used yet
 * (using it would have made it the previous one). No time bound: the previous token opens nothing
 * but the current one, which lives as long as the grant; once the current token is used, the
 * previous one is no longer this one, and presenting it is reuse. The family is active and its
 * consent stands (checked by the caller). Only the presented token opens the sealed successor.
 */
function unusedSuccessor(family: TokenFamily, presentedHash: string, presented: string): string | undefined {
  const sealed = family.previousTokenHash === presentedHash ? family.sealedSuccessor : undefined;
  return sealed === undefined ? undefined : openWith(presented, sealed);
}

/** The scopes a refresh asks for: all granted ones when `scope` is absent, else a non-empty subset of them. */
function narrowScopes(granted: string[], requested: string | undefined): string[] {
  if (requested === undefined) return granted;
  const scopes = parseScopeString(requested);
  const extra = scopes.filter((s) => !granted.includes(s));
  if (scopes.length === 0 || extra.length > 0) {
    throw new InvalidScopeError(`The refresh token does not grant: ${extra.join(' ') || '(empty scope)'}.`);
  }
  return scopes;
}

import { newAuthorizationCode } from '#shared/oauth/grant-tokens';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import { isPublicClient, isRegisteredRedirectUri, type Client } from '#shared/domain/client';
import type { Consent } from '#shared/domain/grant';
import { isScope, parseScopeString } from '#shared/domain/scopes';
import { epochSeconds } from '#shared/domain/time';
import { withoutEmpty } from '#shared/http/form';
import { AUTHORIZE_PARAMS, type AuthorizationRequest } from '#shared/domain/authorization-request';

/** Lifetime of an authorization code (docs/api.md#limits). */
export const CODE_TTL_SECONDS = 600;

export type AuthorizeCheck =
  /** Unknown client or unregistered redirect_uri: never redirect (RFC 6749 §4.1.2.1). */
  | { outcome: 'error-page'; message: string }
  /** Anything else wrong: redirect back with the error code. */
  | { outcome: 'redirect'; location: string }
  | { outcome: 'valid'; request: AuthorizationRequest; client: Client };

const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Validates the parameters of GET /oauth/authorize (and of the consent form that repeats them).
 * `client` is the application `params.client_id` names, as read by the caller (undefined: unknown).
 * `repeated` names the parameters the request carried more than once (see repeatedParams).
 */
export function checkAuthorizationRequest(
  sent: Record<string, string | undefined>,
  client: Client | undefined,
  issuer: string,
  repeated: readonly string[] = [],
): AuthorizeCheck {
  // RFC 6749 §3.1: a parameter sent without a value is treated as omitted.
  const params: Record<string, string | undefined> = withoutEmpty(sent);
  const { redirect_uri: redirectUri } = params;
  // A repeated state arrives joined with commas: not the value the client sent, so it is not echoed.
  const state = repeated.includes('state') ? undefined : params.state;
  if (!client || client.clientId !== params.client_id) return { outcome: 'error-page', message: 'This application is not registered, so it cannot ask for access.' };
  // Exact string comparison with a registered URI: no prefix, case or normalisation games (but a
  // public client's loopback URI, whose port is its own, RFC 8252 §7.3: isRegisteredRedirectUri).
  if (!redirectUri || !isRegisteredRedirectUri(client, redirectUri)) {
    return { outcome: 'error-page', message: 'The redirect address in this request is not registered for this application.' };
  }
  const fail = (error: string, description: string) =>
    ({ outcome: 'redirect', location: redirectWith(redirectUri, { error, error_description: description, state, iss: issuer }) }) as const;

  if (repeated.length > 0) return fail('invalid_request', `Parameter '${repeated[0]}' is repeated.`);
  if (!params.response_type) return fail('invalid_request', 'response_type is required.');
  if (params.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be code.');
  const scopes = parseScopeString(params.scope ?? '');
  if (scopes.length === 0) return fail('invalid_scope', 'scope is required.');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) return fail('invalid_scope', `Unknown scope: ${unknown.join(' ')}.`);
  const { code_challenge: challenge, code_challenge_method: method } = params;
  if (challenge !== undefined || method !== undefined) {
    if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256.');
    if (!challenge || !CODE_CHALLENGE.test(challenge)) return fail('invalid_request', 'code_challenge must be a base64url SHA-256 value.');
  }
  // A public client has no secret, so its code is bound to it by PKCE alone (RFC 8252 §6, RFC 9700 §2.1.1).
  if (!challenge && isPublicClient(client)) {
    return fail('invalid_request', 'code_challenge (PKCE, code_challenge_method S256) is required: this application is a native or browser application.');
  }
  // RFC 9700 §2.1: PKCE (S256) protects the code flow against CSRF, so state may be left out with it.
  if (!state && !challenge) return fail('invalid_request', 'state is required (or PKCE with code_challenge_method S256).');
  return {
    outcome: 'valid',
    client,
    request: {
      clientId: client.clientId, redirectUri, ...(state ? { state } : {}), scopes: [...new Set(scopes)], ...(challenge ? { codeChallenge: challenge } : {}),
    },
  };
}

/**
 * Whether a consent given before may answer this request without asking the user again. Not for a
 * public client redirecting to a loopback address or a private-use scheme: any app on the device
 * can listen there or claim the scheme, so the identity of the client is not assured, and RFC 8252
 * §8.6 asks that such requests not be processed without the user's interaction. An https redirect
 * (a browser application's page, a native app's claimed link) is the client's own.
 */
export function mayReuseConsent(client: Client, redirectUri: string): boolean {
  return !isPublicClient(client) || redirectUri.startsWith('https://');
}

/**
 * The authorization parameters a query string carries more than once (unknown ones are ignored).
 * API Gateway joins repeated values with commas, which would hide the repetition RFC 6749 §3.1
 * forbids (§4.1.2.1: invalid_request).
 */
export function repeatedParams(rawQueryString: string): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const [name] of new URLSearchParams(rawQueryString)) (seen.has(name) ? repeated : seen).add(name);
  return [...repeated].filter((name) => (AUTHORIZE_PARAMS as readonly string[]).includes(name));
}

/** The repository operations issueCode uses (its functions' grants: functions/needs.ts): the code alone, or with the new consent. */
export const ISSUE_CODE_USES = { grants: ['createCode', 'saveConsentWithCode'] } as const satisfies UsesDeclaration;

/**
 * Issues a single-use code for the request under `consent` (the code records its grant
 * generation) and returns the redirect that delivers it. With `record`, the consent is new or
 * changed and is recorded in the same transaction as the code, both or neither, on condition that
 * the stored consent is still `record.previous`; undefined, and nothing written, when it changed.
 */
export async function issueCode(
  grants: Uses<typeof ISSUE_CODE_USES>['grants'], request: AuthorizationRequest, issuer: string, consent: Consent, record?: { previous: Consent | undefined },
): Promise<string | undefined> {
  const { code, stored } = newAuthorizationCode({
    clientId: request.clientId,
    userId: consent.userId,
    redirectUri: request.redirectUri,
    scopes: request.scopes,
    ...(request.codeChallenge ? { codeChallenge: request.codeChallenge } : {}),
    expiresAt: epochSeconds(new Date()) + CODE_TTL_SECONDS,
    ...(consent.grantGeneration === undefined ? {} : { grantGeneration: consent.grantGeneration }),
  });
  if (!record) await grants.createCode(stored);
  else if (!await grants.saveConsentWithCode(consent, record.previous, stored)) return undefined;
  return redirectWith(request.redirectUri, { code, state: request.state, iss: issuer });
}

/** The redirect URI with parameters added to its query (RFC 6749 §4.1.2, RFC 9207 `iss`). */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}


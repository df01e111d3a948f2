import { authenticateClient, type ClientCredentials } from '#shared/oauth/client-auth';
import { CLIENT_AUTHENTICATION_USES, revokeFamily, type GrantContext, type TokenResponse } from '#shared/oauth/grant-context';
import { deviceCodeFamily, newDeviceCode, newGrantToken } from '#shared/oauth/grant-tokens';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import {
  DEVICE_CODE_TTL_SECONDS, formatUserCode, newUserCode, POLL_INTERVAL_SECONDS, SLOW_DOWN_STEP_SECONDS,
  isDeviceAuthorization, type DeviceAuthorization,
} from '#shared/domain/device-authorization';
import { isPublicClient, type Client } from '#shared/domain/client';
import { isScope, parseScopeString } from '#shared/domain/scopes';
import { epochSeconds } from '#shared/domain/time';
import { DeviceGrantError, InvalidClientError, InvalidGrantError, InvalidScopeError, UnauthorizedClientError } from '#shared/errors';
import { hashSecret, safeEqual } from '#shared/secrets';

/** The grant type of a device polling the token endpoint (RFC 8628 §3.4). */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** The path of the page where the user enters a user code (RFC 8628 §3.3 verification_uri). */
export const DEVICE_PAGE_PATH = '/device';

/** Draws of a user code before giving up: a collision with a live code is one in millions. */
const USER_CODE_DRAWS = 3;

/** The device authorization response (RFC 8628 §3.2). */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** The repository operations authorizeDevice uses (the device authorization endpoint's grants: functions/needs.ts). */
export const AUTHORIZE_DEVICE_USES = [CLIENT_AUTHENTICATION_USES, { deviceGrants: ['createDeviceAuthorization'] }] as const satisfies UsesDeclaration;
/** The repository operations pollDeviceCode uses (the token endpoint's grants: functions/needs.ts). */
export const POLL_DEVICE_CODE_USES = [
  CLIENT_AUTHENTICATION_USES, { grants: ['revokeFamily'], deviceGrants: ['recordPoll', 'slowDown', 'redeemDeviceCode'] },
] as const satisfies UsesDeclaration;
type AuthorizeContext = GrantContext<Uses<typeof AUTHORIZE_DEVICE_USES>>;
type PollContext = GrantContext<Uses<typeof POLL_DEVICE_CODE_USES>>;

/** The device grant's repository, which only a token service created with it has. */
function repoOf<DeviceGrants>(ctx: { deviceGrants?: DeviceGrants }): DeviceGrants {
  if (!ctx.deviceGrants) throw new Error('This token service has no device grant repository.');
  return ctx.deviceGrants;
}

/**
 * POST /oauth/device_authorization (docs/api.md#device-authorization; RFC 8628 §3.1–3.2): the
 * client authenticates as at the token endpoint (a public client by client_id alone), must have
 * the device flow enabled in the console (unauthorized_client otherwise) and names known scopes.
 * One read of the client (none from the cache), one transaction of the device authorization and its
 * user code.
 */
export function authorizeDevice(ctx: AuthorizeContext, credentials: ClientCredentials, form: { scope?: string }): Promise<DeviceAuthorizationResponse> {
  // The client is always read (its device-flow setting is not in the cache's keeping): withClient authenticates it,
  // from the cache when it has the client; deleted since, the read finds none.
  return ctx.withClient(credentials,
    () => ctx.grants.getFamilyClientAndConsent(undefined, credentials.clientId),
    ({ client }) => {
      if (!client) throw new InvalidClientError();
      return start(ctx, client, form.scope);
    });
}

async function start(ctx: AuthorizeContext, client: Client, scope: string | undefined): Promise<DeviceAuthorizationResponse> {
  if (!client.deviceFlow) {
    throw new UnauthorizedClientError('This application does not use the device flow: its developer can enable it in the developer console.');
  }
  const scopes = [...new Set(parseScopeString(scope ?? ''))];
  if (scopes.length === 0) throw new InvalidScopeError('scope is required.');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) throw new InvalidScopeError(`Unknown scope: ${unknown.join(' ').slice(0, 100)}.`);

  const { familyId, deviceCode } = newDeviceCode();
  const expiresAt = epochSeconds(ctx.now()) + DEVICE_CODE_TTL_SECONDS;
  const authorization: DeviceAuthorization = {
    familyId, clientId: client.clientId, scopes, status: 'device_pending', deviceCodeHash: hashSecret(deviceCode),
    confidential: !isPublicClient(client), intervalMs: POLL_INTERVAL_SECONDS * 1000, expiresAt,
  };
  for (let draw = 1; ; draw++) {
    const userCode = newUserCode();
    if (await repoOf(ctx).createDeviceAuthorization(authorization, hashSecret(userCode), ctx.now())) {
      const verificationUri = `${ctx.issuer}${DEVICE_PAGE_PATH}`;
      return {
        device_code: deviceCode,
        user_code: formatUserCode(userCode),
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${formatUserCode(userCode)}`,
        expires_in: DEVICE_CODE_TTL_SECONDS,
        interval: POLL_INTERVAL_SECONDS,
      };
    }
    if (draw >= USER_CODE_DRAWS) throw new Error('No free user code after several draws.');
  }
}

/**
 * grant_type=urn:ietf:params:oauth:grant-type:device_code (docs/api.md#token-request-device-code;
 * RFC 8628 §3.4–3.5). A poll is one DynamoDB request, a conditional UpdateItem that records it
 * and answers the item (device-grant-repo.ts recordPoll): a public client is not read (the code's
 * item is bound to it), a confidential one is authenticated as at the token endpoint (from the
 * client cache, or with one more read). From the item: `authorization_pending`, `access_denied`,
 * `expired_token`, `slow_down` (the poll came before its interval: the interval grows by 5 s), or,
 * once approved, the tokens: the access token is signed, then one transaction makes the authorization
 * its family on condition that the user's consent still stands. A device code presented after its
 * redemption revokes the family it became (as a replayed authorization code does).
 */
export function pollDeviceCode(ctx: PollContext, credentials: ClientCredentials, form: { deviceCode: string }): Promise<TokenResponse> {
  if (credentials.clientSecret === undefined) return poll(ctx, credentials, form.deviceCode, false);
  return ctx.withClient(credentials,
    (readClient) => ctx.grants.getFamilyClientAndConsent(undefined, credentials.clientId, undefined, readClient),
    () => poll(ctx, credentials, form.deviceCode, true));
}

async function poll(ctx: PollContext, credentials: ClientCredentials, deviceCode: string, confidential: boolean): Promise<TokenResponse> {
  const repo = repoOf(ctx);
  const familyId = deviceCodeFamily(deviceCode);
  const hash = hashSecret(deviceCode);
  const now = ctx.now().getTime();
  // A public client was not read: a refusal that could be the client's fault is answered as its
  // authentication would be (unknown client, or a confidential one without its secret) first.
  const invalid = async () => {
    if (!confidential) await authenticatePublic(ctx, credentials);
    return new InvalidGrantError('The device code is invalid, expired or already used.');
  };
  if (!familyId) throw await invalid();
  const { polled, item } = await repo.recordPoll(familyId, hash, credentials.clientId, confidential, now);
  if (!item || item.clientId !== credentials.clientId || !safeEqual(item.deviceCodeHash, hash)) throw await invalid();
  if (!isDeviceAuthorization(item)) {
    // The code was redeemed: presented again, it is a replay, and what it produced ends.
    if (item.status === 'active') await revokeFamily(ctx.grants, item.familyId, ctx.now(), 'code_replay');
    throw await invalid();
  }
  if (!polled) return refusedPoll(ctx, credentials, item, hash, now, confidential);
  if (item.status === 'device_pending') throw new DeviceGrantError('authorization_pending', 'The user has not yet approved the request: poll again after the interval.');
  if (item.status === 'device_denied') throw new DeviceGrantError('access_denied', 'The user denied the request.');
  return redeem(ctx, item, hash);
}

/** A poll whose condition failed on an authorization of this code and client: expired, another client type, or too early. */
async function refusedPoll(
  ctx: PollContext, credentials: ClientCredentials, item: DeviceAuthorization, hash: string, now: number, confidential: boolean,
): Promise<never> {
  if (item.confidential !== confidential) {
    await authenticatePublic(ctx, credentials);
    throw new InvalidGrantError('The device code is invalid, expired or already used.');
  }
  if (item.expiresAt <= Math.floor(now / 1000)) throw new DeviceGrantError('expired_token', 'The device code has expired: start a new device authorization.');
  const stepMs = SLOW_DOWN_STEP_SECONDS * 1000;
  await repoOf(ctx).slowDown(item.familyId, hash, stepMs, now);
  throw new DeviceGrantError('slow_down', `Polling too fast: wait at least ${(item.intervalMs + stepMs) / 1000} seconds between requests from now on.`);
}

/** Authenticates a client that named itself by client_id alone, as a public client (one read of it). */
async function authenticatePublic(ctx: PollContext, credentials: ClientCredentials): Promise<void> {
  const { client } = await ctx.grants.getFamilyClientAndConsent(undefined, credentials.clientId);
  authenticateClient(client, credentials, ctx.now());
}

async function redeem(ctx: PollContext, item: DeviceAuthorization, hash: string): Promise<TokenResponse> {
  const userId = item.userId!;
  const accessToken = await ctx.signAccessToken(userId, item.clientId, item.scopes);
  const refreshToken = newGrantToken(userId, item.familyId);
  const outcome = await repoOf(ctx).redeemDeviceCode({ ...item, deviceCodeHash: hash }, hashSecret(refreshToken), ctx.now());
  if (outcome === 'done') return ctx.respond(accessToken, item.scopes, refreshToken);
  // The user revoked the application since approving (and the revocation's Query missed this
  // authorization): it ends here. Or it was redeemed or revoked since the poll read it.
  if (outcome === 'consent_changed') await revokeFamily(ctx.grants, item.familyId, ctx.now(), 'user_revoked');
  throw new InvalidGrantError('The device code is invalid, expired or already used.');
}

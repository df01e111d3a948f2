/**
 * How long a revoked family is kept after the revocation: its refusals stay explainable for a month.
 * Nothing depends on it being there: without the family item, or with it revoked, no token of the
 * family rotates.
 */
export const REVOKED_GRANT_SECONDS = 30 * 24 * 3600;

/**
 * Why a token family was revoked: the family keeps it (`revokedReason`) and the application's
 * `grant.revoked` webhook event carries it. `user_revoked`: the user withdrew access (the account
 * page, or a password reset that signs every application out) or the application was deleted;
 * such a revocation makes no event of its own, since the consent's removal tells the application
 * (shared/webhooks/events.ts). `code_replay`, `refresh_token_reuse`: a used code or refresh token was
 * presented again. `token_revoked`: the application revoked its refresh token (RFC 7009).
 * `account_deleted`: the user deleted the account (shared/accounts/account-deletion.ts); like
 * `user_revoked` it is told by the consent's removal, which carries it (Consent.endedReason). Every
 * revocation names its reason (no default): it decides whether the application hears of it.
 */
export const REVOCATION_REASONS = ['user_revoked', 'refresh_token_reuse', 'code_replay', 'token_revoked', 'account_deleted'] as const;
export type RevocationReason = (typeof REVOCATION_REASONS)[number];

/** Whether a stored value is one of the revocation reasons. */
export const isRevocationReason = (value: unknown): value is RevocationReason =>
  typeof value === 'string' && (REVOCATION_REASONS as readonly string[]).includes(value);

/**
 * Which of the user's devices an application sees (per-device consent, chosen at consent and on the
 * account page): every device now and later (neither member: every consent from before the choice
 * existed); only the chosen ones (`onlyDevices`: devices added later are not shared); or all but the
 * ones left out (`exceptDevices`: devices added later are shared). Each list holds at most the
 * user's devices, so the consent item stays bounded; access tokens carry none of it.
 */
export interface DeviceChoice {
  onlyDevices?: string[];
  exceptDevices?: string[];
}

/** Whether `choice` hides any device, now or later (undefined, or neither list: it shares every one). */
export const restrictsDevices = (choice: DeviceChoice | undefined): boolean => Boolean(choice?.onlyDevices || choice?.exceptDevices);

/** Whether an application under `choice` (undefined: no consent recorded, no restriction) sees the device. */
export function deviceVisible(choice: DeviceChoice | undefined, deviceId: string): boolean {
  if (choice?.onlyDevices && !choice.onlyDevices.includes(deviceId)) return false;
  return !choice?.exceptDevices?.includes(deviceId);
}

/**
 * The choice a form made: of the user's devices `owned`, the `chosen` ones, and whether devices
 * added `later` are shared too. Sharing every device and the later ones is no restriction at all.
 */
export function deviceChoiceOf(owned: readonly string[], chosen: readonly string[], later: boolean): DeviceChoice {
  const picked = new Set(chosen);
  if (!later) return { onlyDevices: owned.filter((id) => picked.has(id)) };
  const left = owned.filter((id) => !picked.has(id));
  return left.length > 0 ? { exceptDevices: left } : {};
}

/** The choice alone, for a consent that replaces another's (no member: every device). */
export const deviceChoiceMembers = (choice: DeviceChoice): DeviceChoice => ({
  ...(choice.onlyDevices ? { onlyDevices: choice.onlyDevices } : {}),
  ...(choice.exceptDevices ? { exceptDevices: choice.exceptDevices } : {}),
});

/** What a user has allowed an application (remembered consent). */
export interface Consent extends DeviceChoice {
  userId: string;
  clientId: string;
  scopes: string[];
  grantedAt: string;
  /**
   * The grant generation: random, given when the consent is first recorded and kept while scopes are
   * added; a revocation deletes the consent, so a later consent has another. Every code and family
   * records the generation it was issued under; the code exchange is conditional on the consent still
   * having it, and each rotation checks it: what a revocation ended cannot be redeemed after
   * it. Absent only on a consent recorded before generations (see grantCondition in grant-repo.ts).
   */
  grantGeneration?: string;
  /**
   * Counts the consent's writes (absent: none since it was first recorded): a form that edits it
   * (the account page's grant page) carries the revision it showed and writes only over that one, so
   * a replayed or stale form changes nothing.
   */
  revision?: number;
  /** When the user last changed it on the grant page. */
  changedAt?: string;
  /**
   * Why the consent is about to be removed, written just before its deletion when the reason is not
   * the user's revocation (an account deletion: `account_deleted`): the removal's stream record
   * carries it into the application's `grant.revoked` event. Absent on a live consent.
   */
  endedReason?: RevocationReason;
  /**
   * Set by the last write that dropped a freed device from the lists (`<device id> <token>`): that
   * write tells the application nothing of a grant change (the device's `device.removed` does).
   */
  deviceRelease?: string;
}

/**
 * The consent a user's "allow" records: the scopes already granted and the requested ones, the
 * devices chosen (or the previous choice), under the generation of the consent read, or
 * `freshGeneration` when there was none.
 */
export function allowedConsent(
  previous: Consent | undefined,
  grant: { userId: string; clientId: string; requested: string[]; grantedAt: string; freshGeneration: string; devices?: DeviceChoice },
): Consent {
  const { userId, clientId, requested, grantedAt, freshGeneration } = grant;
  // The devices chosen on the form; without a form's choice (none asked), the previous one stands.
  const devices = grant.devices ?? previous ?? {};
  return {
    userId,
    clientId,
    scopes: [...new Set([...(previous?.scopes ?? []), ...requested])],
    ...deviceChoiceMembers(devices),
    ...(previous ? { revision: (previous.revision ?? 0) + 1 } : {}),
    grantedAt,
    ...(previous ? (previous.grantGeneration === undefined ? {} : { grantGeneration: previous.grantGeneration }) : { grantGeneration: freshGeneration }),
  };
}

/**
 * The consent the grant page's edit records: the scopes kept (a subset of those granted: an edit
 * never adds one) and the devices chosen, the rest as it was, one revision on.
 */
export function editedConsent(previous: Consent, edit: { scopes: string[]; devices?: DeviceChoice; at: string }): Consent {
  const { onlyDevices: _only, exceptDevices: _except, ...rest } = previous;
  return {
    ...rest,
    scopes: previous.scopes.filter((scope) => edit.scopes.includes(scope)),
    ...deviceChoiceMembers(edit.devices ?? previous),
    revision: (previous.revision ?? 0) + 1,
    changedAt: edit.at,
  };
}

/**
 * An authorization code, as stored: the first state of the token family it starts, in the family's
 * item (`familyKey`), so that the exchange is one conditional UpdateItem that turns it into the
 * family. A code is `<user id>.<family id>.<256-bit random>`: the ids name the item and the
 * consent, so the exchange reads both (and the client) in one BatchGetItem; only the hash of the
 * whole value is stored.
 */
export interface AuthorizationCode {
  familyId: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  scopes: string[];
  codeChallenge?: string;
  /** Hash of the code: kept by the family, so that the code presented again revokes it (replay). */
  codeHash: string;
  /** Until the exchange, which makes the item its family (`active`, later `revoked`). */
  status: 'pending';
  /** Epoch seconds: the code's TTL; the exchange removes it. */
  expiresAt: number;
  /** The generation of the consent the code was issued under (see Consent); absent on a code from before generations. */
  grantGeneration?: string;
}

/** What a family's item holds: the code until its exchange, then the family. */
export type GrantItem = AuthorizationCode | TokenFamily;

/**
 * The chain of refresh tokens issued from one authorization code, as one item (the code's, see
 * AuthorizationCode): no refresh token is stored on its own. A refresh token is `<user id>.<family id>.<256-bit random>` (see
 * token-service.ts); the family keeps the hash of its current token and of the one before it, so a
 * rotation is one conditional UpdateItem of this item. Revoking the family ends every token of it.
 */
export interface TokenFamily {
  familyId: string;
  clientId: string;
  userId: string;
  scopes: string[];
  status: 'active' | 'revoked';
  createdAt: string;
  /** Hash of the family's current refresh token: the only one that rotates. */
  activeTokenHash: string;
  /**
   * Hash of the token the last rotation replaced: the current token's predecessor. Presented again, it
   * gets `sealedSuccessor` (the current token) back, as long as the current token is unused: using
   * the current token rotates it into this field, and from then on the older token is reuse.
   */
  previousTokenHash?: string;
  /** Epoch milliseconds of the last rotation: when the family was last used to rotate (nothing decides by it). */
  rotatedAt?: number;
  /** The current token, sealed with the previous one (see sealWith): only its holder can open it. */
  sealedSuccessor?: string;
  /** Epoch seconds: set when the family is revoked (TTL); an active family has none. */
  expiresAt?: number;
  /** The consent's generation, from the code (see Consent): each rotation checks it. */
  grantGeneration?: string;
  /** Hash of the code the family came from (absent on a family from before codes became families). */
  codeHash?: string;
}

/** Lifetime of an access token, returned as `expires_in`. */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;

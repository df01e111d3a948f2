/** A registered application (OAuth client), as stored. The secret exists only as its hash. */
export interface Client {
  clientId: string;
  secretHash: string;
  name: string;
  description: string;
  website: string;
  redirectUris: string[];
  /** The user account that registered it. */
  developerId: string;
  /** Shown on the consent page. */
  developerName: string;
  createdAt: string;
  /** When the current secret was issued: at registration, or by the last rotation (absent on older items: `createdAt`). */
  secretCreatedAt?: string;
  /**
   * The secret the last rotation replaced, as its hash: still accepted for PREVIOUS_SECRET_OVERLAP_SECONDS
   * after `secretCreatedAt`, unless the developer retires it sooner. A new rotation replaces it.
   */
  previousSecretHash?: string;
}

/**
 * How long a rotated-out client secret keeps working (7 days, as GitHub and Auth0 let both secrets
 * work until the old one is retired): time to deploy the new secret before the old one fails.
 */
export const PREVIOUS_SECRET_OVERLAP_SECONDS = 7 * 24 * 3600;

/** When the current secret was issued. */
export const secretCreatedAt = (client: Client): string => client.secretCreatedAt ?? client.createdAt;

/** Until when the previous secret is accepted; undefined when there is none, or its overlap has passed. */
export function previousSecretValidUntil(client: Client, now: Date): Date | undefined {
  if (!client.previousSecretHash) return undefined;
  // Stored timestamps are UTC without an offset (formatTimestamp).
  const until = new Date(Date.parse(`${secretCreatedAt(client)}Z`) + PREVIOUS_SECRET_OVERLAP_SECONDS * 1000);
  return until.getTime() > now.getTime() ? until : undefined;
}

/**
 * Whether a presented client_id could be one of ours (UUIDs, `demo-client`): anything else is
 * unknown without a lookup, so request input never makes an oversized key.
 */
export function isPlausibleClientId(clientId: string | undefined): clientId is string {
  return !!clientId && clientId.length <= 128;
}

/** What a developer submits to register or edit an application. */
export interface ClientRegistration {
  name: string;
  description: string;
  website: string;
  redirectUris: string[];
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Validates a registration; returns the problems by field (empty when valid). Redirect URIs must be
 * absolute https URLs without a fragment, or http only on loopback hosts (RFC 8252 §7.3).
 */
export function registrationProblems(input: ClientRegistration): Record<string, string> {
  const problems: Record<string, string> = {};
  if (!input.name.trim() || input.name.length > 80) problems.name = 'Give a name of 1 to 80 characters.';
  if (input.description.length > 500) problems.description = 'Keep the description under 500 characters.';
  if (!isWebUrl(input.website)) problems.website = 'Give the address of the application’s website (https://…).';
  if (input.redirectUris.length === 0 || input.redirectUris.length > 10) {
    problems.redirectUris = 'Give 1 to 10 redirect URIs, one per line.';
  } else {
    const bad = input.redirectUris.find((uri) => redirectUriProblem(uri));
    if (bad !== undefined) problems.redirectUris = `${bad}: ${redirectUriProblem(bad)}`;
  }
  return problems;
}

export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'not an absolute URL';
  }
  if (uri.length > 500) return 'longer than 500 characters';
  if (url.hash || uri.includes('#')) return 'must not contain a fragment (#)';
  if (url.username || url.password) return 'must not contain credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return undefined;
  return 'must use https (http is allowed only for localhost, 127.0.0.1 and [::1])';
}

function isWebUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && value.length <= 300;
  } catch {
    return false;
  }
}

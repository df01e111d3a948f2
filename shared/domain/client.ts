/**
 * The two client types of RFC 6749 §2.1, chosen at registration and fixed for the application's
 * life: a *server application* (confidential) keeps a client secret on its server; a *native or
 * browser application* (public) runs on the user's device, where no secret stays secret, so it has
 * none (RFC 8252 §8.5): it names itself with its client_id alone (`token_endpoint_auth_method`
 * `none`) and proves each code with PKCE.
 */
export type ClientType = 'confidential' | 'public';

/** A registered application (OAuth client), as stored. The secret exists only as its hash. */
export interface Client {
  clientId: string;
  /** Its current client secret's hash; absent exactly when the client is public (it has no secret). */
  secretHash?: string;
  /** Absent on every item from before public clients existed: those are confidential (clientTypeOf). */
  clientType?: ClientType;
  name: string;
  description: string;
  website: string;
  redirectUris: string[];
  /** The user account that registered it. */
  developerId: string;
  /** Shown on the consent page. */
  developerName: string;
  createdAt: string;
  /**
   * Whether the application uses the device authorization grant (RFC 8628: a TV, a hub, a
   * command-line tool without a browser), chosen by its developer in the console. Absent: it does not.
   */
  deviceFlow?: boolean;
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

/** The client's type: an item without one is confidential (every application registered before public clients). */
export const clientTypeOf = (client: Pick<Client, 'clientType'>): ClientType => (client.clientType === 'public' ? 'public' : 'confidential');

/** Whether the client is public (a native or browser application, without a secret). */
export const isPublicClient = (client: Pick<Client, 'clientType'>): boolean => clientTypeOf(client) === 'public';

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

/** What a developer submits to register or edit an application (its type is chosen once, at registration: NewClientRegistration). */
export interface ClientRegistration {
  name: string;
  description: string;
  website: string;
  redirectUris: string[];
  /** Whether it uses the device authorization grant (see Client.deviceFlow; absent: no). */
  deviceFlow?: boolean;
}

/** A registration of a new application: its fields and its type. */
export interface NewClientRegistration extends ClientRegistration {
  clientType: ClientType;
}

/**
 * Validates a registration of an application of `clientType` (the one chosen at registration, for
 * an edit); returns the problems by field (empty when valid). Redirect URIs: redirectUriProblem.
 */
export function registrationProblems(input: ClientRegistration, clientType: ClientType = 'confidential'): Record<string, string> {
  const problems: Record<string, string> = {};
  if (!input.name.trim() || input.name.length > 80) problems.name = 'Give a name of 1 to 80 characters.';
  if (input.description.length > 500) problems.description = 'Keep the description under 500 characters.';
  if (!isWebUrl(input.website)) problems.website = 'Give the address of the application’s website (https://…).';
  // An application that only uses the device flow redirects nowhere: it may have no redirect URI.
  if (input.redirectUris.length > 10 || (input.redirectUris.length === 0 && !input.deviceFlow)) {
    problems.redirectUris = input.redirectUris.length === 0
      ? 'Give 1 to 10 redirect URIs, one per line (none only for an application that uses the device flow alone).'
      : 'Give 1 to 10 redirect URIs, one per line.';
  } else {
    const bad = input.redirectUris.find((uri) => redirectUriProblem(uri, clientType));
    if (bad !== undefined) problems.redirectUris = `${bad}: ${redirectUriProblem(bad, clientType)}`;
  }
  return problems;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A private-use URI scheme in reverse domain name form (RFC 8252 §7.1), `com.example.app`: at least
 * two labels of lower-case letters, digits and hyphens, the first starting with a letter. So never
 * `http`, `javascript`, `data` or `file`, which have no dot.
 */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+$/;

/**
 * Why a redirect URI cannot be registered for an application of `clientType` (undefined: it can).
 * Every URI is absolute, at most 500 characters, without a fragment or credentials.
 * - A server application (confidential): https, or http only on localhost, 127.0.0.1 and [::1]
 *   (its developer's own machine).
 * - A native or browser application (public), RFC 8252: https (a browser application's pages, or a
 *   native app's claimed https link, §7.2); http only on the loopback IP literals 127.0.0.1 and
 *   [::1], never `localhost` (§8.3: a name may resolve elsewhere, and the app's listener may not
 *   be the one answering it), with any port (§7.3: the port is chosen when the app starts, and is
 *   ignored in matching, isRegisteredRedirectUri); or a private-use scheme in reverse domain name
 *   form with a single slash, `com.example.app:/callback` (§7.1).
 */
export function redirectUriProblem(uri: string, clientType: ClientType = 'confidential'): string | undefined {
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
  if (clientType === 'confidential') {
    if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return undefined;
    return 'must use https (http is allowed only for localhost, 127.0.0.1 and [::1])';
  }
  if (url.protocol === 'http:') {
    if (url.hostname === 'localhost') return 'use http://127.0.0.1 or http://[::1] instead of localhost (RFC 8252 §8.3)';
    if (loopbackParts(uri) === undefined) return 'must use https, http only on 127.0.0.1 or [::1], or a private-use scheme such as com.example.app:/callback';
    return undefined;
  }
  const scheme = uri.slice(0, uri.indexOf(':'));
  if (!PRIVATE_USE_SCHEME.test(scheme)) {
    return 'must use https, http only on 127.0.0.1 or [::1], or a private-use scheme in reverse domain form such as com.example.app:/callback';
  }
  if (!/^[^:]+:\/(?!\/)/.test(uri)) return 'a private-use scheme takes a single slash and a path, as in com.example.app:/callback (RFC 8252 §7.1)';
  return undefined;
}

/**
 * A loopback redirect URI of a native application (RFC 8252 §7.3), taken apart as written:
 * `http://127.0.0.1` or `http://[::1]`, an optional port (1 to 65535, no leading zero), and the
 * rest (path and query, possibly empty). Undefined for anything else.
 */
function loopbackParts(uri: string): { host: string; rest: string } | undefined {
  const match = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::([1-9][0-9]{0,4}))?((?:[/?][^#]*)?)$/.exec(uri);
  if (!match || Number(match[2] ?? 1) > 65535) return undefined;
  return { host: match[1]!, rest: match[3]! };
}

/**
 * Whether `requested` is a redirect URI registered for the client: the same string as a registered
 * one (no normalisation of case, encoding or dots), except that for a public client a loopback URI
 * matches a registered loopback URI of the same host whatever the port of either (RFC 8252 §7.3:
 * "MUST allow any port to be specified at the time of the request for loopback IP redirect URIs"),
 * the path and query still exact. A confidential client's URIs match exactly, port included.
 */
export function isRegisteredRedirectUri(client: Pick<Client, 'redirectUris' | 'clientType'>, requested: string): boolean {
  if (client.redirectUris.includes(requested)) return true;
  if (!isPublicClient(client)) return false;
  const asked = loopbackParts(requested);
  return asked !== undefined && client.redirectUris.some((uri) => {
    const registered = loopbackParts(uri);
    return registered !== undefined && registered.host === asked.host && registered.rest === asked.rest;
  });
}

/**
 * The web origins of the client's registered redirect URIs (`https://app.example`,
 * `http://127.0.0.1:5173`): those a browser application's pages are served from. A private-use
 * scheme has none (its origin is opaque, `null`, which is never one of them).
 */
export function redirectOrigins(client: Pick<Client, 'redirectUris'>): string[] {
  return client.redirectUris.flatMap((uri) => {
    try {
      const url = new URL(uri);
      return url.protocol === 'https:' || url.protocol === 'http:' ? [url.origin] : [];
    } catch {
      return [];
    }
  });
}

/**
 * Whether a browser page of `origin` is the client's: the origin of one of its registered redirect
 * URIs, exactly; or, for a public client, a loopback origin (`http://127.0.0.1:<port>`,
 * `http://[::1]:<port>`) of the host of one of its registered loopback URIs, whatever the port, as
 * isRegisteredRedirectUri matches them (RFC 8252 §7.3: the port is chosen when the app starts, so the
 * page that sent the user to authorize may be served from any).
 */
export function isRegisteredOrigin(client: Pick<Client, 'redirectUris' | 'clientType'>, origin: string): boolean {
  if (redirectOrigins(client).includes(origin)) return true;
  const asked = isPublicClient(client) ? loopbackParts(origin) : undefined;
  return asked !== undefined && asked.rest === '' && client.redirectUris.some((uri) => loopbackParts(uri)?.host === asked.host);
}

function isWebUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && value.length <= 300;
  } catch {
    return false;
  }
}

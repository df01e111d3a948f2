import { hashSecret, safeEqual } from '#shared/secrets';
import { isPlausibleClientId, isPublicClient, previousSecretValidUntil, type Client } from '#shared/domain/client';
import { BadRequestError, InvalidClientError } from '#shared/errors';

export interface ClientCredentials {
  clientId: string;
  /**
   * The presented secret (client_secret_basic or client_secret_post). Absent: the request carries a
   * client_id in the body and no secret, which is how a public client identifies itself
   * (token_endpoint_auth_method `none`); a confidential client is refused then (`missing`).
   */
  clientSecret?: string;
  /** Sent with HTTP Basic (client_secret_basic) rather than in the body (client_secret_post). */
  basic: boolean;
  /** Without a secret: what a confidential client is answered, the endpoint's rule for missing credentials. */
  missing?: MissingCredentials;
  /**
   * Told the client the request names once it is known (its item read), before it is checked: the
   * endpoint answers with that client's CORS (shared/oauth/cors.ts), its refusals included: a
   * browser application sending a secret or HTTP Basic reads why it was refused. An unknown client
   * is never told.
   */
  identified?: (client: Client) => void;
}

/**
 * A client that authenticated with a method its type does not use: a public client presenting a
 * secret or HTTP Basic (RFC 6749 §5.2 invalid_client, "unsupported authentication method"). It says
 * so, unlike a failed authentication: the client's type is no secret (its registration decides it).
 */
export class ClientAuthMethodError extends InvalidClientError {
  constructor() {
    super();
    this.message = 'This application is a native or browser application (public client, token_endpoint_auth_method none): '
      + 'send its client_id in the body, and no client_secret nor HTTP Basic.';
  }
}

/**
 * What missing body credentials are: at the token endpoint client_id and client_secret are required
 * parameters, and those not supplied are invalid_request (400) (docs/api.md#token-errors);
 * at the revocation endpoint (RFC 7009 §2.1, which refers to RFC 6749 §5.2) no client
 * authentication is invalid_client (401).
 */
export type MissingCredentials = 'invalid_request' | 'invalid_client';

/**
 * Reads the client's credentials from HTTP Basic or the form body (exactly one of the two,
 * RFC 6749 §2.3.1). A body without client_id is `missing`; a client_id without a secret is read as
 * a public client's (token_endpoint_auth_method none), which authenticateClient refuses, as
 * `missing`, once the client read shows a confidential one. A malformed or empty Authorization
 * header authenticates nobody: 401 invalid_client, whatever its scheme. Every 401 carries the Basic
 * challenge (InvalidClientError).
 * Credentials sent both ways are invalid_request.
 */
export function readClientCredentials(authorization: string | undefined, form: Record<string, string>, missing: MissingCredentials): ClientCredentials {
  const credentials = presentedCredentials(authorization, form, missing);
  // An id that cannot be one of ours is an unknown client, answered without a lookup (nor an oversized key).
  if (!isPlausibleClientId(credentials.clientId)) throw new InvalidClientError();
  return credentials;
}

function presentedCredentials(authorization: string | undefined, form: Record<string, string>, missing: MissingCredentials): ClientCredentials {
  if (authorization !== undefined && authorization.trim() !== '') {
    if (form.client_secret !== undefined) {
      throw new BadRequestError('Send the client credentials either with HTTP Basic or in the body, not both.');
    }
    const [, scheme = '', value = ''] = /^\s*(\S+)\s*(.*)$/.exec(authorization) ?? [];
    // The scheme is case-insensitive (RFC 9110 §11.1); Basic is the only one these endpoints take.
    if (!/^basic$/i.test(scheme)) throw new InvalidClientError();
    // Base64 decoding skips whitespace, so spaces after the value need no trimming.
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new InvalidClientError();
    // RFC 6749 §2.3.1: both parts are form-urlencoded before Basic encoding.
    const clientId = decodeFormComponent(decoded.slice(0, colon));
    const clientSecret = decodeFormComponent(decoded.slice(colon + 1));
    if (form.client_id !== undefined && form.client_id !== clientId) {
      throw new BadRequestError('client_id in the body does not match HTTP Basic.');
    }
    return { clientId, clientSecret, basic: true };
  }
  if (!form.client_id) throw missingCredentials(missing);
  // A client_id alone (or with an empty secret, which the form drops): a public client's way, to be checked against the client read.
  if (!form.client_secret) return { clientId: form.client_id, basic: false, missing };
  return { clientId: form.client_id, clientSecret: form.client_secret, basic: false };
}

/** The answer to missing credentials, by the endpoint's rule (none given: invalid_client, RFC 6749 §5.2). */
function missingCredentials(missing: MissingCredentials | undefined) {
  if (missing === 'invalid_request') return new BadRequestError('client_id and client_secret are required (in the form body, or with HTTP Basic).');
  return new InvalidClientError();
}

const NO_SECRET = hashSecret('no-such-client');

/**
 * Authenticates the client the request names, as read (undefined: unknown), by the method its type
 * registered: a public client by its client_id alone, with no secret and no HTTP Basic
 * (ClientAuthMethodError otherwise); a confidential client by its secret, checked against the stored
 * hashes in constant time: the current secret's, and the previous one's while it is valid
 * (PREVIOUS_SECRET_OVERLAP_SECONDS after a rotation, unless retired). Both comparisons always run,
 * so timing tells neither which one matched nor whether there is a previous secret; an unknown client
 * and a wrong secret look alike. A confidential client without a secret gets the endpoint's answer
 * to missing credentials. Tells `credentials.identified` the client first when there is one,
 * whether it then authenticates or not.
 */
export function authenticateClient(client: Client | undefined, credentials: ClientCredentials, now = new Date()): Client {
  if (client) credentials.identified?.(client);
  if (credentials.clientSecret === undefined) {
    if (!client) throw new InvalidClientError();
    if (!isPublicClient(client)) throw missingCredentials(credentials.missing);
    return client;
  }
  const presented = hashSecret(credentials.clientSecret);
  const previousValid = client !== undefined && previousSecretValidUntil(client, now) !== undefined;
  const current = safeEqual(presented, client?.secretHash ?? NO_SECRET);
  // A previous secret past its overlap is compared with the placeholder, so it can never match.
  const previous = safeEqual(presented, (previousValid && client?.previousSecretHash) || NO_SECRET);
  // An empty secret (`Basic base64("id:")`) is no secret: it never matches, whatever is stored.
  const presentedSome = credentials.clientSecret !== '';
  if (client && isPublicClient(client)) throw new ClientAuthMethodError();
  if (!client || !presentedSome || !(current || previous)) throw new InvalidClientError();
  return client;
}

function decodeFormComponent(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

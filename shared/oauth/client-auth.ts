import { hashSecret, safeEqual } from '#shared/secrets';
import { isPlausibleClientId, previousSecretValidUntil, type Client } from '#shared/domain/client';
import { BadRequestError, InvalidClientError } from '#shared/errors';

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Sent with HTTP Basic (client_secret_basic) rather than in the body (client_secret_post); a refusal answers the same challenge either way. */
  basic: boolean;
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
 * RFC 6749 §2.3.1). Missing or incomplete body credentials are `missing`; a malformed or empty
 * Authorization header authenticates nobody: 401 invalid_client, whatever its scheme. Every 401
 * carries the Basic challenge (see InvalidClientError). Credentials sent both ways are invalid_request.
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
  // A client_id without a secret (or with an empty one, which the form drops) authenticates nobody.
  if (!form.client_id || !form.client_secret) {
    if (missing === 'invalid_request') throw new BadRequestError('client_id and client_secret are required (in the form body, or with HTTP Basic).');
    throw new InvalidClientError();
  }
  return { clientId: form.client_id, clientSecret: form.client_secret, basic: false };
}

const NO_SECRET = hashSecret('no-such-client');

/**
 * Checks the secret against the stored hashes in constant time: the current secret's, and the
 * previous one's while it is valid (PREVIOUS_SECRET_OVERLAP_SECONDS after a rotation, unless
 * retired). Both comparisons always run, so timing tells neither which one matched nor whether there
 * is a previous secret; an unknown client and a wrong secret look alike.
 */
export function authenticateClient(client: Client | undefined, credentials: ClientCredentials, now = new Date()): Client {
  const presented = hashSecret(credentials.clientSecret);
  const previousValid = client !== undefined && previousSecretValidUntil(client, now) !== undefined;
  const current = safeEqual(presented, client?.secretHash ?? NO_SECRET);
  // A previous secret past its overlap is compared with the placeholder, so it can never match.
  const previous = safeEqual(presented, (previousValid && client?.previousSecretHash) || NO_SECRET);
  // An empty secret (`Basic base64("id:")`) is no secret: it never matches, whatever is stored.
  const presentedSome = credentials.clientSecret !== '';
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

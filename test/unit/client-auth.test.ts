import { describe, expect, it } from 'vitest';
import { authenticateClient, ClientAuthMethodError, readClientCredentials, type ClientCredentials } from '#shared/oauth/client-auth';
import { hashSecret } from '#shared/secrets';
import { PREVIOUS_SECRET_OVERLAP_SECONDS, type Client } from '#shared/domain/client';
import { AppError } from '#shared/errors';
import { makeClient } from '../support/factories';

const SECRET = 'current-secret-0123456789abcdefghijklmnopqrstuv';
const OLD_SECRET = 'previous-secret-0123456789abcdefghijklmnopqrstu';
const ROTATED_AT = '2026-11-01T10:00:00.000';
const ROTATED_MS = Date.parse(`${ROTATED_AT}Z`);

/** The application the tests authenticate: id `app-1`, secret SECRET. */
const appClient = (overrides: Partial<Client> = {}) => makeClient({ clientId: 'app-1', secretHash: hashSecret(SECRET), ...overrides });

const basic = (user: string, password: string, scheme = 'Basic') => `${scheme} ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** The error a call throws, as the client would see it: status, code and challenge header. */
function refusal(call: () => unknown): { status: number; code: string; challenge: string | undefined } {
  try {
    call();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    // An invalid_request always says what to send instead.
    if (error.code === 'invalid_request') expect(error.message).toMatch(/client_id|client credentials/);
    return { status: error.status, code: error.code, challenge: error.headers['www-authenticate'] };
  }
  throw new Error('expected the call to be refused');
}

const INVALID_CLIENT_BASIC = { status: 401, code: 'invalid_client', challenge: 'Basic realm="oauth"' };
// A 401 always carries a challenge (RFC 9110 §15.5.2), also after credentials in the body.
const INVALID_CLIENT_BODY = { status: 401, code: 'invalid_client', challenge: 'Basic realm="oauth"' };
const INVALID_REQUEST = { status: 400, code: 'invalid_request', challenge: undefined };

describe('readClientCredentials', () => {
  it('reads HTTP Basic credentials, whatever the case of the scheme and the spaces around it', () => {
    for (const header of [basic('app-1', SECRET), basic('app-1', SECRET, 'basic'), basic('app-1', SECRET, 'BASIC'), `  ${basic('app-1', SECRET)}  `]) {
      expect(readClientCredentials(header, {}, 'invalid_request')).toEqual({ clientId: 'app-1', clientSecret: SECRET, basic: true });
    }
  });

  it('form-decodes both Basic parts (RFC 6749 §2.3.1), and keeps a secret with a colon whole', () => {
    expect(readClientCredentials(basic('my+app%2F1', 'a%3Ab+c:d'), {}, 'invalid_request'))
      .toEqual({ clientId: 'my app/1', clientSecret: 'a:b c:d', basic: true });
  });

  it('keeps a Basic part that is not valid percent-encoding as sent', () => {
    expect(readClientCredentials(basic('app-1', '100%'), {}, 'invalid_request').clientSecret).toBe('100%');
  });

  it('refuses another scheme, a Basic value without a colon and an empty Basic value with a Basic challenge', () => {
    expect(refusal(() => readClientCredentials(`Bearer ${Buffer.from(`app-1:${SECRET}`).toString('base64')}`, {}, 'invalid_request'))).toEqual(INVALID_CLIENT_BASIC);
    expect(refusal(() => readClientCredentials(`Basic ${Buffer.from('app-1').toString('base64')}`, {}, 'invalid_request'))).toEqual(INVALID_CLIENT_BASIC);
    expect(refusal(() => readClientCredentials('Basic', {}, 'invalid_request'))).toEqual(INVALID_CLIENT_BASIC);
    expect(refusal(() => readClientCredentials('Basicx YXBwLTE6cw==', {}, 'invalid_request'))).toEqual(INVALID_CLIENT_BASIC);
    expect(refusal(() => readClientCredentials('xBasic YXBwLTE6cw==', {}, 'invalid_request'))).toEqual(INVALID_CLIENT_BASIC);
  });

  it('treats a blank Authorization header as absent and reads the body', () => {
    expect(readClientCredentials('   ', { client_id: 'app-1', client_secret: SECRET }, 'invalid_request'))
      .toEqual({ clientId: 'app-1', clientSecret: SECRET, basic: false });
  });

  it('refuses credentials sent both with Basic and in the body', () => {
    expect(refusal(() => readClientCredentials(basic('app-1', SECRET), { client_secret: SECRET }, 'invalid_request'))).toEqual(INVALID_REQUEST);
  });

  it('accepts a body client_id equal to the Basic one and refuses one that differs', () => {
    expect(readClientCredentials(basic('app-1', SECRET), { client_id: 'app-1' }, 'invalid_request').clientId).toBe('app-1');
    expect(refusal(() => readClientCredentials(basic('app-1', SECRET), { client_id: 'app-2' }, 'invalid_request'))).toEqual(INVALID_REQUEST);
  });

  it('answers missing body credentials as the endpoint asks: invalid_request or invalid_client without a challenge', () => {
    for (const form of [{}, { client_secret: SECRET }, { client_id: '', client_secret: SECRET }] as Record<string, string>[]) {
      expect(refusal(() => readClientCredentials(undefined, form, 'invalid_request'))).toEqual(INVALID_REQUEST);
      expect(refusal(() => readClientCredentials(undefined, form, 'invalid_client'))).toEqual(INVALID_CLIENT_BODY);
    }
  });

  it('reads a client_id without a secret (or with an empty one) as a public client\'s, carrying the endpoint\'s answer for a confidential one', () => {
    // Before public clients these two were refused here; a confidential client still is, by authenticateClient once it is read.
    for (const form of [{ client_id: 'app-1' }, { client_id: 'app-1', client_secret: '' }] as Record<string, string>[]) {
      expect(readClientCredentials(undefined, form, 'invalid_request')).toEqual({ clientId: 'app-1', basic: false, missing: 'invalid_request' });
      expect(readClientCredentials(undefined, form, 'invalid_client')).toEqual({ clientId: 'app-1', basic: false, missing: 'invalid_client' });
      expect(refusal(() => authenticateClient(appClient(), readClientCredentials(undefined, form, 'invalid_request')))).toEqual(INVALID_REQUEST);
      expect(refusal(() => authenticateClient(appClient(), readClientCredentials(undefined, form, 'invalid_client')))).toEqual(INVALID_CLIENT_BODY);
    }
    expect(refusal(() => readClientCredentials(undefined, { client_id: 'a'.repeat(129) }, 'invalid_request'))).toEqual(INVALID_CLIENT_BODY);
  });

  it('refuses a client id that cannot be one of ours, with the challenge of the method used', () => {
    const long = 'a'.repeat(129);
    expect(readClientCredentials(undefined, { client_id: 'a'.repeat(128), client_secret: SECRET }, 'invalid_request').clientId).toHaveLength(128);
    expect(refusal(() => readClientCredentials(undefined, { client_id: long, client_secret: SECRET }, 'invalid_request'))).toEqual(INVALID_CLIENT_BODY);
    expect(refusal(() => readClientCredentials(basic(long, SECRET), {}, 'invalid_request'))).toEqual(INVALID_CLIENT_BASIC);
    expect(refusal(() => readClientCredentials(basic('', SECRET), {}, 'invalid_request'))).toEqual(INVALID_CLIENT_BASIC);
  });
});

describe('authenticateClient', () => {
  const body = (clientSecret: string): ClientCredentials => ({ clientId: 'app-1', clientSecret, basic: false });
  const viaBasic = (clientSecret: string): ClientCredentials => ({ clientId: 'app-1', clientSecret, basic: true });
  const rotated = appClient({ secretCreatedAt: ROTATED_AT, previousSecretHash: hashSecret(OLD_SECRET) });
  const during = new Date(ROTATED_MS + 1000);
  const after = new Date(ROTATED_MS + PREVIOUS_SECRET_OVERLAP_SECONDS * 1000);

  it('accepts the current secret', () => {
    const client = appClient();
    expect(authenticateClient(client, body(SECRET))).toBe(client);
  });

  it('refuses a secret differing only in its last character, or one character longer or shorter', () => {
    for (const secret of [`${SECRET.slice(0, -1)}w`, `${SECRET}x`, SECRET.slice(0, -1)]) {
      expect(refusal(() => authenticateClient(appClient(), body(secret)))).toEqual(INVALID_CLIENT_BODY);
    }
  });

  it('refuses an unknown client, with the challenge of the method used', () => {
    expect(refusal(() => authenticateClient(undefined, body(SECRET)))).toEqual(INVALID_CLIENT_BODY);
    expect(refusal(() => authenticateClient(undefined, viaBasic(SECRET)))).toEqual(INVALID_CLIENT_BASIC);
    expect(refusal(() => authenticateClient(appClient(), viaBasic('wrong')))).toEqual(INVALID_CLIENT_BASIC);
  });

  it('refuses an unknown client even with the secret of the placeholder that stands in for it', () => {
    expect(refusal(() => authenticateClient(undefined, body('no-such-client')))).toEqual(INVALID_CLIENT_BODY);
  });

  it('refuses an empty secret, even against a stored hash of the empty string', () => {
    expect(refusal(() => authenticateClient(appClient({ secretHash: hashSecret('') }), body('')))).toEqual(INVALID_CLIENT_BODY);
    expect(refusal(() => authenticateClient(appClient({ secretHash: hashSecret(''), previousSecretHash: hashSecret(''), secretCreatedAt: ROTATED_AT }), body(''), during)))
      .toEqual(INVALID_CLIENT_BODY);
  });

  it('accepts the previous secret during the overlap after a rotation, and the current one too', () => {
    expect(authenticateClient(rotated, body(OLD_SECRET), during)).toBe(rotated);
    expect(authenticateClient(rotated, body(SECRET), during)).toBe(rotated);
    expect(authenticateClient(rotated, body(OLD_SECRET), new Date(after.getTime() - 1))).toBe(rotated);
  });

  it('refuses the previous secret once the overlap has passed, and keeps accepting the current one', () => {
    expect(refusal(() => authenticateClient(rotated, body(OLD_SECRET), after))).toEqual(INVALID_CLIENT_BODY);
    expect(authenticateClient(rotated, body(SECRET), after)).toBe(rotated);
  });

  it('refuses the previous secret of a client whose previous secret was retired', () => {
    const retired = appClient({ secretCreatedAt: ROTATED_AT });
    expect(refusal(() => authenticateClient(retired, body(OLD_SECRET), during))).toEqual(INVALID_CLIENT_BODY);
  });

  it('accepts no secret of another client', () => {
    const other = appClient({ clientId: 'app-2', secretHash: hashSecret('other-secret') });
    expect(refusal(() => authenticateClient(rotated, body('other-secret'), during))).toEqual(INVALID_CLIENT_BODY);
    expect(authenticateClient(other, body('other-secret'))).toBe(other);
  });
});

describe('authenticateClient of a public client (token_endpoint_auth_method none)', () => {
  const publicClient = appClient({ clientType: 'public', secretHash: undefined, secretCreatedAt: undefined });
  const none = (missing: 'invalid_request' | 'invalid_client' = 'invalid_request'): ClientCredentials => ({ clientId: 'app-1', basic: false, missing });

  it('accepts its client_id alone, and tells the hook which client it was', () => {
    const seen: string[] = [];
    expect(authenticateClient(publicClient, { ...none(), identified: (c) => seen.push(c.clientId) })).toBe(publicClient);
    expect(seen).toEqual(['app-1']);
  });

  // Every 401 carries the Basic challenge, after body credentials too.
  it('refuses a secret or HTTP Basic, saying which method the client uses, with the challenge, the hook told of the client (its CORS)', () => {
    for (const [credentials, challenge] of [
      [{ clientId: 'app-1', clientSecret: SECRET, basic: false }, 'Basic realm="oauth"'],
      [{ clientId: 'app-1', clientSecret: SECRET, basic: true }, 'Basic realm="oauth"'],
      [{ clientId: 'app-1', clientSecret: '', basic: true }, 'Basic realm="oauth"'],
    ] as [ClientCredentials, string | undefined][]) {
      const seen: string[] = [];
      const call = () => authenticateClient(publicClient, { ...credentials, identified: (c) => seen.push(c.clientId) });
      expect(refusal(call)).toEqual({ status: 401, code: 'invalid_client', challenge });
      expect(call).toThrow(ClientAuthMethodError);
      expect(call).toThrow('This application is a native or browser application (public client, token_endpoint_auth_method none): '
        + 'send its client_id in the body, and no client_secret nor HTTP Basic.');
      expect(seen).toEqual(['app-1', 'app-1', 'app-1']);
    }
  });

  it('refuses a public client even with the hash of the placeholder secret or of an empty one', () => {
    expect(refusal(() => authenticateClient(publicClient, body('no-such-client')))).toEqual(INVALID_CLIENT_BODY);
    expect(refusal(() => authenticateClient({ ...publicClient, secretHash: hashSecret(SECRET) }, body(SECRET)))).toEqual(INVALID_CLIENT_BODY);
  });

  it('refuses an unknown client without a secret as invalid_client, whatever the endpoint answers missing credentials with', () => {
    expect(refusal(() => authenticateClient(undefined, none('invalid_request')))).toEqual(INVALID_CLIENT_BODY);
    expect(refusal(() => authenticateClient(undefined, none('invalid_client')))).toEqual(INVALID_CLIENT_BODY);
    expect(() => authenticateClient(undefined, none())).not.toThrow(ClientAuthMethodError);
  });

  it('answers a confidential client without a secret as the endpoint answers missing credentials, the hook told of the client', () => {
    const seen: string[] = [];
    const hook = { identified: (c: Client) => seen.push(c.clientId) };
    expect(refusal(() => authenticateClient(appClient(), { ...none('invalid_request'), ...hook }))).toEqual(INVALID_REQUEST);
    expect(refusal(() => authenticateClient(appClient(), { ...none('invalid_client'), ...hook }))).toEqual(INVALID_CLIENT_BODY);
    // Credentials made by hand, without the endpoint's rule: invalid_client.
    expect(refusal(() => authenticateClient(appClient({ clientType: 'confidential' }), { clientId: 'app-1', basic: false, ...hook }))).toEqual(INVALID_CLIENT_BODY);
    expect(seen).toEqual(['app-1', 'app-1', 'app-1']);
  });

  it('tells the hook of a known client whether it authenticates or not, and never of an unknown one', () => {
    const seen: string[] = [];
    const hook = { identified: (c: Client) => seen.push(c.clientId) };
    authenticateClient(appClient(), { ...body(SECRET), ...hook });
    expect(() => authenticateClient(appClient(), { ...body('wrong'), ...hook })).toThrow();
    expect(() => authenticateClient(undefined, { ...body(SECRET), ...hook })).toThrow();
    expect(() => authenticateClient(undefined, { ...none(), ...hook })).toThrow();
    expect(seen).toEqual(['app-1', 'app-1']);
  });

  function body(clientSecret: string): ClientCredentials {
    return { clientId: 'app-1', clientSecret, basic: false };
  }
});

import { describe, expect, it } from 'vitest';
import { checkAuthorizationRequest, mayReuseConsent, redirectWith, repeatedParams } from '#shared/oauth/authorize-request';
import type { Client } from '#shared/domain/client';
import { AUTHORIZE_PARAMS } from '#shared/domain/authorization-request';

const ISSUER = 'https://auth.example.test';
const REDIRECT_URI = 'https://app.example.test/callback?from=app';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'; // RFC 7636 appendix B

const client: Client = {
  clientId: 'app-1', secretHash: 'x', name: 'App', description: '', website: 'https://app.example.test',
  redirectUris: [REDIRECT_URI, 'http://localhost:8080/cb'], developerId: 'dev', developerName: 'Dev', createdAt: '2026-01-01T00:00:00.000',
};

const valid = { client_id: 'app-1', redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'read_user read_device', state: 'xyz' };

/** The query parameters of the redirect a failed check answers with. */
function redirectError(params: Record<string, string | undefined>, repeated: string[] = []): Record<string, string> {
  const check = checkAuthorizationRequest(params, client, ISSUER, repeated);
  if (check.outcome !== 'redirect') throw new Error(`expected a redirect, got ${JSON.stringify(check)}`);
  const url = new URL(check.location);
  expect(`${url.origin}${url.pathname}`).toBe('https://app.example.test/callback');
  expect(url.searchParams.get('from')).toBe('app');
  return Object.fromEntries([...url.searchParams].filter(([name]) => name !== 'from'));
}

describe('checkAuthorizationRequest', () => {
  it('accepts a complete request, with the scopes once each', () => {
    expect(checkAuthorizationRequest({ ...valid, scope: 'read_user read_device read_user' }, client, ISSUER)).toEqual({
      outcome: 'valid', client, request: { clientId: 'app-1', redirectUri: REDIRECT_URI, state: 'xyz', scopes: ['read_user', 'read_device'] },
    });
  });

  it('shows the error page, never a redirect, for an unknown client or a client that is not the one named', () => {
    expect(checkAuthorizationRequest(valid, undefined, ISSUER)).toMatchObject({ outcome: 'error-page', message: expect.stringContaining('not registered') });
    expect(checkAuthorizationRequest({ ...valid, client_id: 'app-2' }, client, ISSUER)).toMatchObject({ outcome: 'error-page' });
  });

  it('shows the error page for a redirect URI that is missing or not registered exactly', () => {
    for (const redirectUri of [undefined, '', `${REDIRECT_URI}&x=1`, REDIRECT_URI.toUpperCase(), 'https://app.example.test/callback']) {
      expect(checkAuthorizationRequest({ ...valid, redirect_uri: redirectUri }, client, ISSUER))
        .toMatchObject({ outcome: 'error-page', message: expect.stringContaining('redirect address') });
    }
  });

  it('redirects a repeated parameter as invalid_request, without echoing a repeated state', () => {
    expect(redirectError({ ...valid, state: 'a,b' }, ['state'])).toEqual({
      error: 'invalid_request', error_description: "Parameter 'state' is repeated.", iss: ISSUER,
    });
    expect(redirectError(valid, ['scope'])).toEqual({ error: 'invalid_request', error_description: "Parameter 'scope' is repeated.", state: 'xyz', iss: ISSUER });
  });

  it('redirects a missing or other response_type with the state and the issuer', () => {
    expect(redirectError({ ...valid, response_type: undefined })).toEqual({ error: 'invalid_request', error_description: 'response_type is required.', state: 'xyz', iss: ISSUER });
    expect(redirectError({ ...valid, response_type: '' })).toMatchObject({ error: 'invalid_request' });
    expect(redirectError({ ...valid, response_type: 'token' })).toEqual({ error: 'unsupported_response_type', error_description: 'response_type must be code.', state: 'xyz', iss: ISSUER });
  });

  it('redirects a missing, empty or unknown scope as invalid_scope, naming the unknown ones', () => {
    expect(redirectError({ ...valid, scope: undefined })).toMatchObject({ error: 'invalid_scope', error_description: 'scope is required.' });
    expect(redirectError({ ...valid, scope: ' ' })).toMatchObject({ error: 'invalid_scope', error_description: 'scope is required.' });
    expect(redirectError({ ...valid, scope: 'read_user admin root' })).toMatchObject({ error: 'invalid_scope', error_description: 'Unknown scope: admin root.' });
  });

  it('accepts PKCE with S256, and then lets state be left out (RFC 9700 §2.1)', () => {
    const pkce = { ...valid, code_challenge: CHALLENGE, code_challenge_method: 'S256' };
    expect(checkAuthorizationRequest(pkce, client, ISSUER)).toMatchObject({ outcome: 'valid', request: { codeChallenge: CHALLENGE, state: 'xyz' } });
    const check = checkAuthorizationRequest({ ...pkce, state: undefined }, client, ISSUER);
    expect(check).toMatchObject({ outcome: 'valid', request: { codeChallenge: CHALLENGE } });
    expect(check.outcome === 'valid' && 'state' in check.request).toBe(false);
  });

  it('requires state without PKCE, and treats an empty state as none', () => {
    for (const state of [undefined, '']) {
      expect(redirectError({ ...valid, state })).toEqual({
        error: 'invalid_request', error_description: 'state is required (or PKCE with code_challenge_method S256).', iss: ISSUER,
      });
    }
  });

  it('refuses a challenge without S256, a method without a challenge, and a challenge that is not 43 base64url characters', () => {
    const method = { error: 'invalid_request', error_description: 'code_challenge_method must be S256.' };
    const shape = { error: 'invalid_request', error_description: 'code_challenge must be a base64url SHA-256 value.' };
    expect(redirectError({ ...valid, code_challenge: CHALLENGE })).toMatchObject(method);
    expect(redirectError({ ...valid, code_challenge: CHALLENGE, code_challenge_method: 'plain' })).toMatchObject(method);
    expect(redirectError({ ...valid, code_challenge: CHALLENGE, code_challenge_method: 's256' })).toMatchObject(method);
    expect(redirectError({ ...valid, code_challenge_method: 'S256' })).toMatchObject(shape);
    for (const challenge of [CHALLENGE.slice(1), `${CHALLENGE}A`, `${CHALLENGE.slice(1)}=`, `${CHALLENGE.slice(1)}+`, `x${CHALLENGE}`, `${CHALLENGE}\n`]) {
      expect(redirectError({ ...valid, code_challenge: challenge, code_challenge_method: 'S256' })).toMatchObject(shape);
    }
  });

  it('treats parameters sent empty as omitted (RFC 6749 §3.1): an empty challenge and method are no PKCE', () => {
    expect(checkAuthorizationRequest({ ...valid, code_challenge: '', code_challenge_method: '' }, client, ISSUER))
      .toMatchObject({ outcome: 'valid', request: { state: 'xyz' } });
  });
});

describe('checkAuthorizationRequest of a public client (native or browser application, RFC 8252)', () => {
  const LOOPBACK = 'http://127.0.0.1/oauth/callback';
  const publicClient: Client = {
    ...client, secretHash: undefined, clientType: 'public',
    redirectUris: [LOOPBACK, 'http://[::1]:4000/cb?app=1', 'com.example.app:/callback', 'https://app.example.test/spa/'],
  };
  const pkce = { code_challenge: CHALLENGE, code_challenge_method: 'S256' };
  const request = (redirectUri: string, extra: Record<string, string> = pkce) =>
    checkAuthorizationRequest({ ...valid, redirect_uri: redirectUri, ...extra }, publicClient, ISSUER);

  it('accepts a registered loopback URI at any port, path and query exact, and the other registered URIs as they are', () => {
    for (const uri of [LOOPBACK, 'http://127.0.0.1:1/oauth/callback', 'http://127.0.0.1:53124/oauth/callback', 'http://127.0.0.1:65535/oauth/callback',
      'http://[::1]/cb?app=1', 'http://[::1]:4000/cb?app=1', 'http://[::1]:61001/cb?app=1', 'com.example.app:/callback', 'https://app.example.test/spa/']) {
      expect(request(uri), uri).toMatchObject({ outcome: 'valid', request: { redirectUri: uri, codeChallenge: CHALLENGE } });
    }
  });

  it('shows the error page for a loopback URI with another path, query, host or scheme, or a port that is no port', () => {
    for (const uri of ['http://127.0.0.1:53124/oauth/callback/', 'http://127.0.0.1:53124/oauth/other', 'http://127.0.0.1:53124/oauth/callback?x=1',
      'http://127.0.0.1:53124/OAUTH/callback', 'http://localhost:53124/oauth/callback', 'http://[::1]:53124/oauth/callback', 'http://127.0.0.2:53124/oauth/callback',
      'https://127.0.0.1:53124/oauth/callback', 'http://127.0.0.1:0/oauth/callback', 'http://127.0.0.1:65536/oauth/callback',
      'http://127.0.0.1:080/oauth/callback', 'http://127.0.0.1:/oauth/callback', 'http://127.0.0.1:53124/oauth/callback#x',
      'http://127.0.0.1:53124@evil.example/oauth/callback', 'http://[::1]:4000/cb', 'com.example.app:/callback/', 'com.example.app://callback',
      'https://app.example.test:8443/spa/', 'xhttp://127.0.0.1:53124/oauth/callback', 'evil.example:http://127.0.0.1:53124/oauth/callback',
      'http://127.0.0.1:53124x/oauth/callback', 'http://127.0.0.1:53124/oauth/callback\n']) {
      expect(request(uri), uri).toMatchObject({ outcome: 'error-page', message: expect.stringContaining('redirect address') });
    }
  });

  it('requires PKCE: without a challenge it redirects invalid_request, with or without state', () => {
    // An empty state counts as none (RFC 6749 §3.1).
    for (const extra of [{}, { state: '' }, { code_challenge_method: 'S256' }, { code_challenge: '', state: '' }] as Record<string, string>[]) {
      const check = request(LOOPBACK, extra);
      if (check.outcome !== 'redirect') throw new Error(`expected a redirect, got ${JSON.stringify(check)}`);
      const url = new URL(check.location);
      expect(`${url.origin}${url.pathname}`).toBe('http://127.0.0.1/oauth/callback');
      expect(url.searchParams.get('error')).toBe('invalid_request');
      expect(url.searchParams.get('error_description')).toMatch(/code_challenge|code_challenge_method/);
    }
    expect(request(LOOPBACK, {})).toMatchObject({ outcome: 'redirect', location: expect.stringContaining('native+or+browser+application') });
  });

  it('keeps matching a confidential client\'s loopback URIs exactly, port included', () => {
    expect(checkAuthorizationRequest({ ...valid, redirect_uri: 'http://localhost:8080/cb' }, client, ISSUER)).toMatchObject({ outcome: 'valid' });
    for (const uri of ['http://localhost:8081/cb', 'http://localhost/cb']) {
      expect(checkAuthorizationRequest({ ...valid, redirect_uri: uri }, client, ISSUER), uri).toMatchObject({ outcome: 'error-page' });
    }
    const confidentialLoopback = { ...client, redirectUris: [LOOPBACK] };
    expect(checkAuthorizationRequest({ ...valid, redirect_uri: 'http://127.0.0.1:5000/oauth/callback' }, confidentialLoopback, ISSUER)).toMatchObject({ outcome: 'error-page' });
    expect(checkAuthorizationRequest({ ...valid, redirect_uri: LOOPBACK }, { ...confidentialLoopback, clientType: 'confidential' }, ISSUER)).toMatchObject({ outcome: 'valid' });
  });
});

describe('mayReuseConsent (RFC 8252 §8.6)', () => {
  it('reuses a consent for a confidential client and for a public client\'s https redirect, never for its loopback or private-use one', () => {
    const publicClient: Client = { ...client, clientType: 'public' };
    expect(mayReuseConsent(client, 'http://localhost:8080/cb')).toBe(true);
    expect(mayReuseConsent({ ...client, clientType: 'confidential' }, 'http://127.0.0.1/cb')).toBe(true);
    expect(mayReuseConsent(publicClient, 'https://app.example.test/spa/')).toBe(true);
    expect(mayReuseConsent(publicClient, 'http://127.0.0.1:5000/cb')).toBe(false);
    expect(mayReuseConsent(publicClient, 'http://[::1]:5000/cb')).toBe(false);
    expect(mayReuseConsent(publicClient, 'com.example.app:/callback')).toBe(false);
  });
});

describe('repeatedParams', () => {
  it('names the authorization parameters sent more than once, once each, and ignores other names', () => {
    expect(repeatedParams('state=a&scope=x&state=b&state=c&utm=1&utm=2&client_id=app-1')).toEqual(['state']);
    expect(repeatedParams('scope=a&scope=b&client_id=x&client_id=x')).toEqual(['scope', 'client_id']);
    expect(repeatedParams(AUTHORIZE_PARAMS.map((name) => `${name}=1`).join('&'))).toEqual([]);
    expect(repeatedParams('')).toEqual([]);
  });
});

describe('redirectWith', () => {
  it('adds the parameters to the query the redirect URI already has, encoded, leaving out undefined ones', () => {
    expect(redirectWith('https://app.example.test/cb?from=app', { code: 'a b&c', state: undefined, iss: ISSUER }))
      .toBe('https://app.example.test/cb?from=app&code=a+b%26c&iss=https%3A%2F%2Fauth.example.test');
  });

  it('replaces a parameter of the registered URI rather than sending it twice', () => {
    expect(redirectWith('https://app.example.test/cb?state=registered', { state: 'sent' })).toBe('https://app.example.test/cb?state=sent');
  });
});

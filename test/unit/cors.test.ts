import { describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { allowedOrigin, corsHeaders, preflightHeaders, withClientCors } from '#shared/oauth/cors';
import type { Client } from '#shared/domain/client';
import { AppError, InvalidGrantError, ServiceUnavailableError } from '#shared/errors';
import { ok } from '#shared/http/responses';

// CORS of the token and revocation endpoints (shared/oauth/cors.ts) on its own; over HTTP, and in
// Chromium, test/e2e/public-clients.test.ts.

const publicClient: Client = {
  clientId: 'spa', clientType: 'public', name: 'SPA', description: '', website: 'https://spa.example',
  redirectUris: ['https://spa.example/callback', 'http://127.0.0.1:5173/cb', 'com.example.app:/callback'],
  developerId: 'd', developerName: 'D', createdAt: '2026-01-01T00:00:00.000',
};
const confidential: Client = { ...publicClient, clientId: 'server', clientType: undefined, secretHash: 'h' };

const event = (headers: Record<string, string>) => ({ headers }) as unknown as APIGatewayProxyEventV2;

describe('allowedOrigin', () => {
  it('allows exactly the origins of a public client\'s web redirect URIs, a loopback one with any port (as redirect URIs match)', () => {
    for (const origin of ['https://spa.example', 'http://127.0.0.1:5173', 'http://127.0.0.1:5174', 'http://127.0.0.1']) {
      expect(allowedOrigin(publicClient, origin)).toBe(origin);
    }
    for (const origin of ['https://spa.example:444', 'http://spa.example', 'https://evil.example', 'http://[::1]:5173', 'http://localhost:5173',
      'http://127.0.0.1:5174/', 'http://127.0.0.1:5174/cb', 'http://127.0.0.1:0', 'http://127.0.0.1:65536', 'https://127.0.0.1:5173', 'http://127.0.0.2:5173',
      'null', 'com.example.app:', 'com.example.app', 'https://spa.example/', 'https://SPA.example', '*', '']) {
      expect(allowedOrigin(publicClient, origin), origin).toBeUndefined();
    }
  });

  it('allows nothing to a confidential client (its answers are for its server), to no client and without an Origin', () => {
    expect(allowedOrigin(confidential, 'https://spa.example')).toBeUndefined();
    expect(allowedOrigin({ ...publicClient, clientType: 'confidential' }, 'https://spa.example')).toBeUndefined();
    expect(allowedOrigin(undefined, 'https://spa.example')).toBeUndefined();
    expect(allowedOrigin(publicClient, undefined)).toBeUndefined();
    // A confidential client's loopback redirect URI matches exactly, port included: no other port's page is its.
    expect(allowedOrigin({ ...confidential, clientType: 'confidential' }, 'http://127.0.0.1:5174')).toBeUndefined();
  });
});

describe('corsHeaders', () => {
  it('always varies by Origin, and allows the origin with the exposed headers only when allowed, never credentials', () => {
    expect(corsHeaders(publicClient, 'https://spa.example')).toEqual({
      vary: 'origin', 'access-control-allow-origin': 'https://spa.example', 'access-control-expose-headers': 'retry-after',
    });
    expect(corsHeaders(publicClient, 'https://evil.example')).toEqual({ vary: 'origin' });
    expect(corsHeaders(undefined, undefined)).toEqual({ vary: 'origin' });
  });
});

describe('preflightHeaders', () => {
  it('answers a CORS preflight with POST and a Content-Type from any origin, for an hour, without credentials', () => {
    expect(preflightHeaders({ origin: 'https://anyone.example', 'access-control-request-method': 'POST' })).toEqual({
      allow: 'POST, OPTIONS',
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'content-type',
      'access-control-max-age': '3600',
    });
  });

  it('answers an OPTIONS request that is no preflight with Allow alone', () => {
    expect(preflightHeaders({})).toEqual({ allow: 'POST, OPTIONS' });
    expect(preflightHeaders({ origin: 'https://spa.example' })).toEqual({ allow: 'POST, OPTIONS' });
    expect(preflightHeaders({ 'access-control-request-method': 'POST' })).toEqual({ allow: 'POST, OPTIONS' });
  });
});

describe('withClientCors', () => {
  const spa = event({ origin: 'https://spa.example' });

  it('puts the identified client\'s CORS on the answer, keeping its own headers', async () => {
    const answer = await withClientCors(spa, async (identified) => {
      identified(publicClient);
      return ok({ done: true }, { 'cache-control': 'no-store' });
    });
    expect(answer.headers).toEqual({
      'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store',
      vary: 'origin', 'access-control-allow-origin': 'https://spa.example', 'access-control-expose-headers': 'retry-after',
    });
  });

  it('puts none on the answer of a request that names no known client, nor of another origin', async () => {
    expect((await withClientCors(spa, async () => ok({}))).headers['access-control-allow-origin']).toBeUndefined();
    const other = await withClientCors(event({ origin: 'https://evil.example' }), async (identified) => {
      identified(publicClient);
      return ok({});
    });
    expect(other.headers).toEqual({ 'content-type': 'application/json; charset=utf-8', vary: 'origin' });
  });

  it('puts them on an error once the client is identified, as the AppError the wrapper answers, and not on one before', async () => {
    const refused = await withClientCors(spa, async (identified) => {
      identified(publicClient);
      throw new InvalidGrantError('no');
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidGrantError);
    expect((refused as AppError).headers).toEqual({ vary: 'origin', 'access-control-allow-origin': 'https://spa.example', 'access-control-expose-headers': 'retry-after' });

    const early = await withClientCors(spa, async () => {
      throw new InvalidGrantError('before');
    }).catch((error: unknown) => error as AppError);
    expect(early.headers).toEqual({ vary: 'origin' });
  });

  it('turns any other error into the answer the wrapper would give (a 503 keeps its Retry-After, exposed)', async () => {
    const storage = Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException', $metadata: {} });
    const unavailable = await withClientCors(spa, async (identified) => {
      identified(publicClient);
      throw storage;
    }).catch((error: unknown) => error as AppError);
    expect(unavailable).toBeInstanceOf(ServiceUnavailableError);
    expect(unavailable.headers).toMatchObject({ 'retry-after': '1', 'access-control-allow-origin': 'https://spa.example' });
  });
});

import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { openWith, sealWith } from '#shared/oauth/sealing';
import type { SecretReveal } from '#shared/data/client-repo';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import type { Client, ClientRegistration, ClientType, NewClientRegistration } from '#shared/domain/client';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import type { User } from '#shared/domain/user';
import { NotFoundError } from '#shared/errors';
import { readCookie, setCookie } from '#shared/http/cookies';
import { hashSecret, randomToken } from '#shared/secrets';
import { secretPath } from '#shared/views/console-links';

/** Reads the registration form's fields (redirect URIs: one per line). */
export function registrationFrom(form: Record<string, string>): ClientRegistration {
  return {
    name: (form.name ?? '').trim(),
    description: (form.description ?? '').trim(),
    website: (form.website ?? '').trim(),
    redirectUris: [...new Set((form.redirect_uris ?? '').split(/\r?\n/).map((line) => line.trim()).filter(Boolean))],
    // A checkbox: sent (as `on`) only when checked.
    deviceFlow: form.device_flow === 'on',
  };
}

/**
 * The kind of application the registration form chose (`client_type`): `confidential` (a server
 * application, the form's default, and what a form without the field registers) or `public` (a native
 * or browser application). Undefined for any other value.
 */
export function clientTypeFrom(form: Record<string, string>): ClientType | undefined {
  const value = form.client_type ?? 'confidential';
  return value === 'confidential' || value === 'public' ? value : undefined;
}

/** The application of the page's path (`{client_id}`), to read with the session (see readPage). */
export const pathClientId = (event: APIGatewayProxyEventV2): string | undefined => event.pathParameters?.client_id;

/** The application the page read, if the signed-in developer owns it (404 otherwise). */
export function ownedApp(app: Client | undefined, developerId: string): Client {
  if (!app || app.developerId !== developerId) throw new NotFoundError('No such application.');
  return app;
}

/** How long a new secret waits to be shown: the browser follows the redirect at once; one that never does loses it. */
export const SECRET_REVEAL_SECONDS = 10 * 60;
/** The cookie that holds the key of the secret waiting to be shown, only on the page that shows it. */
const REVEAL_COOKIE = 'reveal';

/**
 * A new secret to show once after the redirect (POST-redirect-GET; never in a URL): the item to store,
 * the secret sealed under a fresh random key, and the cookie that gives the key to this browser, for
 * the page that shows it only and for as long as the item lives.
 */
export function newSecretReveal(app: Pick<Client, 'clientId' | 'developerId'>, secret: string, reason: SecretReveal['reason'], now: Date, secure: boolean): { reveal: SecretReveal; cookie: string } {
  const key = randomToken();
  return {
    reveal: {
      keyHash: hashSecret(key), clientId: app.clientId, developerId: app.developerId, sealedSecret: sealWith(key, secret), reason,
      expiresAt: epochSeconds(now) + SECRET_REVEAL_SECONDS,
    },
    cookie: setCookie(REVEAL_COOKIE, key, { secure, path: secretPath(app.clientId), maxAgeSeconds: SECRET_REVEAL_SECONDS }),
  };
}

/** The key this browser holds for a secret waiting to be shown on this page, and the cookie that clears it. */
export function revealKeyOf(event: APIGatewayProxyEventV2, clientId: string, secure: boolean): { key?: string; clear: string[] } {
  const key = readCookie(event, REVEAL_COOKIE);
  return { key, clear: key === undefined ? [] : [setCookie(REVEAL_COOKIE, '', { secure, path: secretPath(clientId), maxAgeSeconds: 0 })] };
}

/** The secret sealed under `key` (undefined if it was sealed under another). */
export function openReveal(key: string, sealedSecret: string): string | undefined {
  try {
    return openWith(key, sealedSecret);
  } catch {
    return undefined;
  }
}

/** The repository operations registerApp uses (its function's grants: functions/needs.ts). */
export const REGISTER_APP_USES = { clients: ['registerClient', 'createClient'] } as const satisfies UsesDeclaration;

/**
 * Registers the developer's application. A server application (confidential) gets a new client
 * secret, stored as its hash, and that secret waiting to be shown once (newSecretReveal), in one
 * transaction; the cookie that opens it is returned with the application. A native or browser
 * application (public) gets no secret at all: one PutItem, and no cookie.
 */
export async function registerApp(
  clients: Uses<typeof REGISTER_APP_USES>['clients'], developer: User, registration: NewClientRegistration, secure: boolean, now = new Date(),
): Promise<{ app: Client; cookie?: string }> {
  const { clientType, ...fields } = registration;
  const registered = {
    ...fields,
    clientId: randomUUID(),
    developerId: developer.id,
    developerName: `${developer.firstname} ${developer.lastname}`,
    createdAt: formatTimestamp(now),
  };
  if (clientType === 'public') {
    const app: Client = { ...registered, clientType };
    await clients.createClient(app);
    return { app };
  }
  const secret = randomToken();
  const app: Client = { ...registered, secretHash: hashSecret(secret), secretCreatedAt: formatTimestamp(now) };
  const { reveal, cookie } = newSecretReveal(app, secret, 'registered', now, secure);
  await clients.registerClient(app, reveal);
  return { app, cookie };
}

/** The repository operations rotateAppSecret uses (its function's grants: functions/needs.ts). */
export const ROTATE_APP_SECRET_USES = { clients: ['rotateSecret'] } as const satisfies UsesDeclaration;

/**
 * Gives the application a new client secret (the current one becomes the previous, see
 * ClientRepo.rotateSecret), waiting to be shown once, in one transaction. Returns the cookie that opens it.
 */
export async function rotateAppSecret(clients: Uses<typeof ROTATE_APP_SECRET_USES>['clients'], app: Client, secure: boolean, now = new Date()): Promise<string> {
  const secret = randomToken();
  const { reveal, cookie } = newSecretReveal(app, secret, 'rotated', now, secure);
  await clients.rotateSecret(app.developerId, app.clientId, hashSecret(secret), formatTimestamp(now), reveal);
  return cookie;
}

/** The repository operations revealWebhookSecret uses (its functions' grants: functions/needs.ts). */
export const REVEAL_WEBHOOK_SECRET_USES = { clients: ['saveSecretReveal'] } as const satisfies UsesDeclaration;

/** Keeps a new webhook signing secret of the application to be shown once (one PutItem). Returns the cookie that opens it. */
export async function revealWebhookSecret(
  clients: Uses<typeof REVEAL_WEBHOOK_SECRET_USES>['clients'], app: Client, secret: string, reason: 'webhook-registered' | 'webhook-rotated', secure: boolean,
): Promise<string> {
  const { reveal, cookie } = newSecretReveal(app, secret, reason, new Date(), secure);
  await clients.saveSecretReveal(reveal);
  return cookie;
}

import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { batch, clients, issuer, sessions } from '#shared/runtime';
import { consentRead } from '#shared/data/consent-repo';
import { sessionUserId, type SignedIn } from '#shared/data/session-repo';
import type { BatchRead } from '#shared/data/batch-read';
import { isPlausibleClientId, type Client } from '#shared/domain/client';
import type { Consent } from '#shared/domain/grant';
import { subscriptionRead, type WebhookSubscription } from '#shared/data/webhook-repo';
import { readCookie, secureCookies, SESSION_COOKIE } from '#shared/http/cookies';
import { csrfToken } from '#shared/http/csrf';
import { redirect, type HttpResult } from '#shared/http/responses';
import type { Viewer } from '#shared/views/account-pages';

export { safeReturnTo } from '#shared/http/return-to';

/** Whether this deployment's cookies carry Secure (all but plain-http localhost): read on use, as runtime.ts reads every setting. */
export const secureCookie = (): boolean => secureCookies(issuer());

export interface PageReads {
  /** The signed-in user, if the session cookie names a live session. */
  signedIn?: SignedIn;
  /** The application the page is about, when it names one and it exists. */
  client?: Client;
  /** The signed-in user's consent to that application, if any. */
  consent?: Consent;
  /** That application's webhook subscription, when asked for and there is one. */
  webhook?: WebhookSubscription;
  /** The answer of the page's `ofUser` read, for the signed-in user only. */
  ofUser?: unknown;
}

/** What a page reads besides the session (its PageReadsSpec, resolved for the request). */
export interface PageReadRequest {
  /** The application the page is about. */
  clientId?: string;
  /** The signed-in user's consent to that application. */
  consent?: boolean;
  /** That application's webhook subscription. */
  webhook?: boolean;
  /** A session of an account being deleted opens the page (the deletion's own pages). */
  finishesDeletion?: boolean;
  /** Items of the signed-in user's own (their second factors, say), read by the user id the session cookie names. */
  ofUser?: (userId: string) => BatchRead<unknown>;
}

/**
 * What a browser page reads before it acts, in at most one BatchGetItem: the session and its user,
 * and, when `clientId` is given, that application (and, `consent`, the user's consent to it;
 * `webhook`, its webhook subscription); and `ofUser`'s items of the user. The user's own items are
 * read by the id the session cookie names (`<user id>.<token>`) before the session is checked, and
 * answered only when the session is live and that user's. A session of an account being deleted
 * counts as none, unless `finishesDeletion` (the deletion's own pages).
 */
export async function readPage(event: APIGatewayProxyEventV2, request: PageReadRequest = {}): Promise<PageReads> {
  const { clientId, consent: withConsent, webhook: withWebhook, finishesDeletion, ofUser } = request;
  const sessionId = readCookie(event, SESSION_COOKIE);
  const userId = sessionId === undefined || !(withConsent || ofUser) ? undefined : sessionUserId(sessionId);
  const [session, [client], consent, webhook, own] = await batch.read([
    sessions.signedInRead(sessionId),
    clients.clientsRead([clientId]),
    withConsent ? consentRead(userId, clientId) : NOTHING,
    withWebhook && isPlausibleClientId(clientId) ? subscriptionRead(clientId) : NOTHING,
    ofUser && userId ? ofUser(userId) : NOTHING,
  ] as const);
  const signedIn = session?.deleting && !finishesDeletion ? undefined : session;
  return {
    signedIn, client, consent: signedIn && client ? consent : undefined, webhook: signedIn && client ? webhook : undefined,
    ...(ofUser && signedIn && signedIn.user.id === userId ? { ofUser: own } : {}),
  };
}

/** A read of no item. */
const NOTHING: BatchRead<undefined> = { keys: [], parse: () => undefined };

/** Sends the browser to the login page, to come back to `returnTo` afterwards; `again`: to sign in again, signed in (a change that asks for a recent sign-in). */
export function loginRedirect(returnTo: string, status: 302 | 303 = 302, again = false): HttpResult {
  return redirect(`/login?${again ? 'again=yes&' : ''}return_to=${encodeURIComponent(returnTo)}`, status);
}

/** The origin a return path will finally redirect to, for CSP form-action (an authorize request's redirect_uri). */
export function redirectOriginOf(returnTo: string): string[] {
  try {
    const target = new URL(returnTo, 'http://self').searchParams.get('redirect_uri');
    return target ? [new URL(target).origin] : [];
  } catch {
    return [];
  }
}

/**
 * The page's reads (see readPage) and what every page needs: the CSRF token and the cookie that
 * carries it, and the viewer shown in the header.
 */
export async function pageContext(event: APIGatewayProxyEventV2, request: PageReadRequest = {}): Promise<PageReads & { viewer: Viewer }> {
  const reads = await readPage(event, request);
  const { token, cookies } = csrfToken(event, secureCookie());
  return { ...reads, viewer: { email: reads.signedIn?.user.email, csrf: token, cookies } };
}

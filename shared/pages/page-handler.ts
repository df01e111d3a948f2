import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { loginRedirect, pageContext, type PageReads } from '#shared/pages/session';
import type { SignedIn } from '#shared/data/session-repo';
import type { BatchRead } from '#shared/data/batch-read';
import type { Client } from '#shared/domain/client';
import { AnswerInstead, csrfChecked, formBody, htmlHandler, type Handler, type PageMiddleware } from '#shared/views/page-wrapper';
import type { HttpResult } from '#shared/http/responses';
import type { Viewer } from '#shared/views/account-pages';
import { asksRecentSignIn } from '#shared/config';
import { RECENT_SIGN_IN_SECONDS } from '#shared/pages/security';

type Form = Record<string, string>;

/** What a page reads with the session, in the same BatchGetItem (readPage). */
export interface PageReadsSpec {
  /**
   * The page finishes an account's deletion: a session of an account being deleted, which opens no
   * other page, opens this one (its `signedIn.deleting` is set).
   */
  finishesDeletion?: boolean;
  /** The application the page is about: its id, taken from the request (path, query or form). */
  client?: (event: APIGatewayProxyEventV2, form: Form) => string | undefined;
  /** The signed-in user's consent to that application. */
  consent?: boolean;
  /** That application's webhook subscription. */
  webhook?: boolean;
  /**
   * Items of the signed-in user's own, read with the session by the user id its cookie names (the
   * page's `ofUser`: for the signed-in user only). `allOf` (batch-read.ts) makes one of several reads.
   */
  ofUser?: (userId: string) => BatchRead<unknown>;
}

/** Where the login page sends a signed-out user back to: a path, or one made from the request and the application read. */
export type LoginReturn = string | ((read: { event: APIGatewayProxyEventV2; client?: Client }) => string);

/**
 * What a page needs before its own work, each provided by one middleware, in this order:
 * - `form`: its urlencoded body, parsed (400 when it is not one; 413 when larger than `formBytes`,
 *   the page's own limit, or else MAX_FORM_BYTES);
 * - `csrf`: the form's CSRF field matches its cookie (403 otherwise), before anything is read;
 * - `session`: one BatchGetItem of the session and its user, and of what `reads` names; with the
 *   viewer (the header's e-mail, the CSRF token for the page's forms and the cookie that carries it);
 * - `session: 'required'`: a signed-in user, or the login page instead (302 from a GET, 303 from a
 *   POST), to come back to `loginReturn`; and, when the function's declaration asks for a recent
 *   sign-in (EndpointDeclaration.recentSignIn), one of the last RECENT_SIGN_IN_SECONDS, or the
 *   login page instead, which says why, to sign in again and come back to `loginReturn`.
 */
export type PageSpec =
  & ({ form?: false; csrf?: false; formBytes?: undefined } | { form: true; csrf: boolean; formBytes?: number })
  & (
    | { session?: undefined; reads?: undefined; loginReturn?: undefined }
    | { session: 'optional'; reads?: PageReadsSpec; loginReturn?: undefined }
    | { session: 'required'; reads?: PageReadsSpec; loginReturn: LoginReturn }
  );

/** What the page's session read found, and the viewer. */
export interface SessionPage extends PageReads {
  viewer: Viewer;
}

/** The answer of a page's `ofUser` read: there whenever someone is signed in. */
type OfUser<N extends PageSpec> = N extends { reads: { ofUser: (userId: string) => BatchRead<infer T> } }
  ? N extends { session: 'required' } ? { ofUser: T } : { ofUser?: T }
  : unknown;

/** What a page's handler is given: the request, and what its needs provided, typed by them. */
export type Page<N extends PageSpec> =
  & { event: APIGatewayProxyEventV2 }
  & (N extends { form: true } ? { form: Form } : unknown)
  & (N extends { session: 'required' } ? SessionPage & { signedIn: SignedIn } : N extends { session: 'optional' } ? SessionPage : unknown)
  & OfUser<N>;

/** What the middlewares put on `context.page` as they run. */
type PageState = Partial<SessionPage> & { form?: Form };

/**
 * A web page's handler: it declares what it needs (see PageSpec) and is given it, so it does only
 * its own work. Errors become the HTML error page (htmlHandler).
 */
export function pageHandler<const N extends PageSpec>(needs: N, handler: (page: Page<N>) => Promise<HttpResult>): Handler {
  const middlewares: PageMiddleware<PageState>[] = [
    ...(needs.form ? [formBody(needs.formBytes)] : []),
    ...(needs.csrf ? [csrfChecked()] : []),
    ...(needs.session ? [sessionRead(needs.reads)] : []),
    ...(needs.session === 'required' ? [signInRequired(needs.loginReturn)] : []),
  ];
  return htmlHandler(middlewares, (event, { page }) => handler({ ...page, event } as Page<N>));
}

/** The page's own path: where a page that is its own form comes back to after the login. */
export const thisPage: LoginReturn = ({ event }) => event.rawPath;

/** Reads the session and its user, and what `reads` names, in one BatchGetItem (pageContext), onto the page. */
function sessionRead(reads: PageReadsSpec | undefined): PageMiddleware<PageState> {
  return {
    before: async ({ event, context: { page } }) => {
      Object.assign(page, await pageContext(event, {
        clientId: reads?.client?.(event, page.form ?? {}), consent: reads?.consent, webhook: reads?.webhook, finishesDeletion: reads?.finishesDeletion,
        ofUser: reads?.ofUser,
      }));
    },
  };
}

/**
 * Sends a signed-out browser to the login page instead of the page: 303 from a form (POST), else 302.
 * And a page that changes how the account signs in (its declaration's `recentSignIn`) runs only for
 * a sign-in of the last RECENT_SIGN_IN_SECONDS, so that a session stolen or left open cannot add a
 * way in that outlives a password reset: else, nothing done, the login page likewise, with
 * `again=yes` (it says why, and shows its form to a signed-in browser), to come back here. A
 * session of an account being deleted is let through: its deletion was confirmed after a recent
 * sign-in, and only the deletion's own pages open for it.
 */
function signInRequired(loginReturn: LoginReturn): PageMiddleware<PageState> {
  return {
    before: ({ event, context: { page } }) => {
      const { signedIn } = page;
      const again = signedIn !== undefined && !signedIn.deleting && Date.now() / 1000 - signedIn.signedInAt > RECENT_SIGN_IN_SECONDS
        && asksRecentSignIn(event.routeKey);
      if (signedIn && !again) return;
      const returnTo = typeof loginReturn === 'string' ? loginReturn : loginReturn({ event, client: page.client });
      throw new AnswerInstead(loginRedirect(returnTo, event.requestContext.http.method === 'POST' ? 303 : 302, again));
    },
  };
}

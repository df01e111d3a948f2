import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { errorPage } from '#shared/views/html';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { requestLog, toAppError } from '#shared/http/http';
import type { HttpResult } from '#shared/http/responses';

export type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>;

/**
 * The Lambda context of a page's request, with what its middlewares found on `page` (middy's way:
 * each middleware puts its result on the context, and the handler reads it there).
 */
export interface PageContext<TPage> extends Context {
  page: TPage;
}

/** A middleware of a page: it reads the request and adds what it found to `context.page`. */
export type PageMiddleware<TPage> = MiddlewareObj<APIGatewayProxyEventV2, HttpResult, Error, PageContext<TPage>>;

/**
 * What a middleware answers in place of the page (the login page's redirect), thrown so that
 * neither the middlewares after it nor the handler run. Not middy's early response (a value
 * returned from `before`): that skips the `after` middlewares too, and with them the request's log line.
 */
export class AnswerInstead {
  constructor(readonly response: HttpResult) {}
}

/**
 * Wraps a web page: its middlewares, in order, then the handler. Errors are mapped as for the JSON
 * API (a storage outage is 503 with `Retry-After`) and become an HTML page with the same status,
 * headers and a clear message; an AnswerInstead is answered as it is. One log line per request.
 */
export function htmlHandler<TPage extends object>(
  middlewares: readonly PageMiddleware<TPage>[],
  handler: (event: APIGatewayProxyEventV2, context: PageContext<TPage>) => Promise<HttpResult>,
): Handler {
  return middy<APIGatewayProxyEventV2, HttpResult, Error, PageContext<TPage>>()
    .use(requestLog())
    .use({
      onError: (request) => {
        request.response = request.error instanceof AnswerInstead ? request.error.response : errorPage(toAppError(request.error));
      },
    })
    .before((request) => {
      request.context.page = {} as TPage;
    })
    .use([...middlewares])
    .handler(handler) as unknown as Handler;
}

/**
 * Parses the page's form (application/x-www-form-urlencoded, see parseForm) onto `page.form`, within
 * `maxBytes` when the page declares a limit of its own (else MAX_FORM_BYTES).
 */
export function formBody(maxBytes?: number): PageMiddleware<{ form?: Record<string, string> }> {
  return {
    before: ({ event, context: { page } }) => {
      page.form = parseForm(event, maxBytes === undefined ? {} : { maxBytes });
    },
  };
}

/** Refuses (403) a form whose CSRF field does not match its cookie, before the page reads or does anything. */
export function csrfChecked(): PageMiddleware<{ form?: Record<string, string> }> {
  return {
    before: ({ event, context: { page } }) => {
      checkCsrf(event, page.form ?? {});
    },
  };
}

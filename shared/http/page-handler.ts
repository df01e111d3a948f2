import middy from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { html, page } from '#shared/http/html';
import { requestLog, toAppError } from '#shared/http/http';
import type { HttpResult } from '#shared/http/responses';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>;

/** Wraps a web-page handler: errors become an HTML page with the same status and a clear message. */
export function pageHandler(handler: (event: APIGatewayProxyEventV2) => Promise<HttpResult>): Handler {
  return middy<APIGatewayProxyEventV2, HttpResult>()
    .use(requestLog())
    .use({
      onError: (request) => {
        const error = toAppError(request.error);
        request.response = page({
          title: 'Something went wrong',
          status: error.status,
          body: html`<div class="card"><h1>Something went wrong</h1><p class="error" role="alert">${error.message}</p></div>`,
        });
      },
    })
    .handler(handler) as unknown as Handler;
}

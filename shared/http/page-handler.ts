import middy from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { errorPage } from '#shared/views/html';
import { requestLog, toAppError } from '#shared/http/http';
import type { HttpResult } from '#shared/http/responses';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>;

/**
 * Wraps a web-page handler: errors are mapped as for the JSON API (a storage outage is 503 with
 * `Retry-After`) and become an HTML page with the same status, headers and a clear message.
 */
export function pageHandler(handler: (event: APIGatewayProxyEventV2) => Promise<HttpResult>): Handler {
  return middy<APIGatewayProxyEventV2, HttpResult>()
    .use(requestLog())
    .use({
      onError: (request) => {
        request.response = errorPage(toAppError(request.error));
      },
    })
    .handler(handler) as unknown as Handler;
}

import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ShadowError, ShadowStore } from '#local/iot-shadow';

// AWS IoT Core's data-plane HTTP API for the classic shadow, locally, on loopback: UpdateThingShadow
// (POST /things/<thing>/shadow), GetThingShadow (GET) and DeleteThingShadow (DELETE), over the same
// shadow service as the broker's MQTT topics (local/iot-shadow.ts), so an update made here is
// published to the device as IoT Core publishes it. Errors come back as the REST-JSON protocol
// the SDK reads: the status, `x-amzn-ErrorType` and `{ "message" }`. Named shadows are not served.

const ERROR_TYPES: Record<number, string> = {
  400: 'InvalidRequestException', 401: 'UnauthorizedException', 403: 'ForbiddenException', 404: 'ResourceNotFoundException', 409: 'ConflictException',
  413: 'RequestEntityTooLargeException', 415: 'UnsupportedDocumentEncodingException', 429: 'ThrottlingException', 500: 'InternalFailureException',
  503: 'ServiceUnavailableException',
};

export interface DataPlaneStandIn {
  /** The endpoint to give the IoT data-plane client. */
  url: string;
  /** Tests: the next `count` UpdateThingShadow calls fail with 503 ServiceUnavailableException, changing nothing. */
  failUpdates(count: number): void;
  /** Each call served so far, as `<operation> <thing>` (failed ones included). */
  calls: string[];
  stop(): Promise<void>;
}

export async function startDataPlane(shadows: ShadowStore): Promise<DataPlaneStandIn> {
  let failing = 0;
  const calls: string[] = [];
  const send = (res: ServerResponse, status: number, body: unknown, type?: string) => {
    res.writeHead(status, { 'content-type': 'application/json', ...(type ? { 'x-amzn-errortype': type } : {}) });
    res.end(JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, error: Pick<ShadowError, 'code' | 'message'>) => send(res, error.code, { message: error.message }, ERROR_TYPES[error.code] ?? 'InternalFailureException');

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = /^\/things\/([^/]+)\/shadow$/.exec(url.pathname);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (!match || url.searchParams.has('name')) return refuse(res, { code: 404, message: 'Not Found' });
    const thing = decodeURIComponent(match[1]!);
    const operation = req.method === 'POST' ? 'UpdateThingShadow' : req.method === 'GET' ? 'GetThingShadow' : req.method === 'DELETE' ? 'DeleteThingShadow' : undefined;
    if (!operation) return send(res, 405, { message: 'Method Not Allowed' }, 'MethodNotAllowedException');
    calls.push(`${operation} ${thing}`);
    if (operation === 'UpdateThingShadow' && failing > 0) {
      failing -= 1;
      return refuse(res, { code: 503, message: 'Service Unavailable (a failure the test asked for)' });
    }
    const body = Buffer.concat(chunks);
    const result = operation === 'UpdateThingShadow' ? shadows.update(thing, body) : operation === 'GetThingShadow' ? shadows.get(thing) : shadows.delete(thing);
    if ('error' in result) return refuse(res, result.error);
    return send(res, 200, operation === 'UpdateThingShadow' ? (result.ok as { accepted: unknown }).accepted : result.ok);
  };
  const server = createServer((req, res) => void answer(req, res).catch(() => refuse(res, { code: 500, message: 'Internal Failure' })));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    failUpdates(count) {
      failing = count;
    },
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

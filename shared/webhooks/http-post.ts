import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';

/** Limits of one delivery attempt. */
export const DELIVERY_LIMITS = {
  /** The whole attempt: connection, TLS, request and the response's status line. */
  timeoutMs: 5000,
  /** Of the response body, read (and ignored) at most this much; then the connection is dropped. */
  maxResponseBytes: 16 * 1024,
} as const;

export interface PostOutcome {
  /** The HTTP status, when the receiver answered. */
  statusCode?: number;
  latencyMs: number;
  /** Why there is no status: `timeout`, `connection refused`, …. */
  error?: string;
}

/**
 * POSTs `body` to `url`, connecting only to `address` (checked by checkWebhookUrl, so a DNS change
 * between the check and the connection cannot redirect it), with TLS still verified for the URL's
 * host name. Follows no redirect (a 3xx is an answer like any other), reads at most
 * `maxResponseBytes` of the answer, and gives up after `timeoutMs`. Never throws.
 */
export function postWebhook(url: URL, address: string, headers: Record<string, string>, body: string, limits = DELIVERY_LIMITS): Promise<PostOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const family = isIP(address);
  const lookup: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<PostOutcome, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, latencyMs: elapsed() });
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, {
      method: 'POST',
      lookup,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'device-user-service-webhooks/1' },
      agent: false,
    }, (res) => {
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > limits.maxResponseBytes) {
          res.destroy();
          finish({ statusCode: res.statusCode });
        }
      });
      res.on('end', () => finish({ statusCode: res.statusCode }));
      res.on('error', () => finish({ statusCode: res.statusCode }));
    });
    const timer = setTimeout(() => {
      finish({ error: 'timeout' });
      req.destroy();
    }, limits.timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => finish({ error: describe(error) }));
    req.end(body);
  });
}

function describe(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ECONNREFUSED': return 'connection refused';
    case 'ECONNRESET': return 'connection reset';
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'host unreachable';
    default: return error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT') ? 'TLS error' : 'network error';
  }
}

import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** How a host name becomes addresses; tests inject one, the default asks the system resolver for all of them. */
export type Resolve = (host: string) => Promise<string[]>;

export interface UrlCheckOptions {
  /** The local service: also `http://localhost…` and `http://127.0.0.1…` (and `[::1]`), nothing else plain or loopback. */
  allowLocalHttp: boolean;
  resolve?: Resolve;
}

export type UrlCheck =
  | { ok: true; url: URL; /** The addresses checked: connect to one of these, not to a new lookup. */ addresses: string[] }
  | { ok: false; reason: string };

export const MAX_WEBHOOK_URL_LENGTH = 2048;

// Everything that is not the public Internet: this host, private networks, link-local (the cloud
// metadata service at 169.254.169.254 and fd00:ec2::254 among them), carrier-grade NAT,
// documentation and benchmark ranges, multicast, reserved, and IPv6 forms that embed IPv4
// addresses (mapped, NAT64, 6to4, Teredo), which could reach the same places.
// Two lists: BlockList matches an IPv4 address against IPv6 rules too (as ::ffff:a.b.c.d), which
// the rule for IPv4-mapped addresses would then refuse.
const BLOCKED_V4 = new BlockList();
const BLOCKED_V6 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED_V4.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['::ffff:0:0', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64],
  ['2001::', 23], ['2001:db8::', 32], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) BLOCKED_V6.addSubnet(net, prefix, 'ipv6');
// Of IPv6, only global unicast (2000::/3) is public at all.
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

/** True when `address` (an IPv4 or IPv6 literal) is a public unicast address a webhook may reach. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !BLOCKED_V4.check(address, 'ipv4');
  if (family === 6) {
    const bare = address.split('%')[0]!;
    return GLOBAL_UNICAST.check(bare, 'ipv6') && !BLOCKED_V6.check(bare, 'ipv6');
  }
  return false;
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

const systemResolve: Resolve = async (host) => (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * Checks a webhook URL before registration and again before each delivery (DNS can change): https
 * only, no credentials in it, and every address its host resolves to public. With
 * `allowLocalHttp` (the local service), `http://localhost`, `http://127.0.0.1` and `http://[::1]`
 * are accepted too. On success, `addresses` are the checked addresses: connect to them rather than
 * resolving the name again. Reasons are short sentences for a form.
 */
export async function checkWebhookUrl(raw: string, opts: UrlCheckOptions): Promise<UrlCheck> {
  const text = raw.trim();
  if (text === '') return { ok: false, reason: 'Enter the URL of your webhook endpoint.' };
  if (text.length > MAX_WEBHOOK_URL_LENGTH) return { ok: false, reason: `The URL must be at most ${MAX_WEBHOOK_URL_LENGTH} characters long.` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: 'This is not a valid URL; it should look like https://example.com/webhooks.' };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'The URL must not contain a user name or password.' };
  if (url.hash !== '') return { ok: false, reason: 'The URL must not contain a fragment (#…).' };
  const host = url.hostname.toLowerCase();
  if (url.protocol === 'http:') {
    if (opts.allowLocalHttp && LOCAL_HOSTS.has(host)) {
      return { ok: true, url, addresses: [host === 'localhost' ? '127.0.0.1' : host.replace(/^\[|\]$/g, '')] };
    }
    return { ok: false, reason: 'The URL must start with https://.' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'The URL must start with https://.' };
  if (host === '') return { ok: false, reason: 'The URL must name a host.' };

  const literal = host.startsWith('[') ? host.slice(1, -1) : host;
  let addresses: string[];
  if (isIP(literal) !== 0) {
    addresses = [literal];
  } else {
    if (host === 'localhost' || host.endsWith('.localhost') || !host.includes('.')) {
      return { ok: false, reason: 'The URL must name a public host.' };
    }
    try {
      addresses = await (opts.resolve ?? systemResolve)(host);
    } catch {
      return { ok: false, reason: `The host ${host} could not be found.` };
    }
    if (addresses.length === 0) return { ok: false, reason: `The host ${host} could not be found.` };
  }
  if (!addresses.every(isPublicAddress)) {
    return { ok: false, reason: 'The URL must point to a public Internet address, not a private, loopback, link-local or metadata address.' };
  }
  return { ok: true, url, addresses };
}

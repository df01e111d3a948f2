import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { expect } from 'vitest';
import { DEMO_CLIENT, DEMO_USERS } from '#local/seed';
import type { LocalService } from '#local/service';
import { hashPassword } from '#shared/accounts/password';
import { randomToken } from '#shared/secrets';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createUserRepo } from '#shared/data/user-repo';
import { formatTimestamp } from '#shared/domain/time';
import type { User } from '#shared/domain/user';

/** A user who can sign in. */
export interface Account {
  user: Pick<User, 'id' | 'email'> & Partial<User>;
  password: string;
}

export const ALICE: Account = DEMO_USERS[0];

/** An authorization code's shape: `<user id>.<family id>.<256-bit random>` (shared/oauth/grant-tokens.ts). */
export const CODE_SHAPE = /^[0-9A-Za-z-]{1,64}\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/;

/** A response as a browser sees it before following any redirect. */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The `location` header, if any. */
  location: string | null;
  /** The `set-cookie` headers, one per cookie. */
  setCookies: string[];
}

/** The cookies of one host: what a browser would send back. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  /** Keeps what `set-cookie` headers set; an empty value or `Max-Age=0` removes the cookie. */
  absorb(setCookies: readonly string[]): void {
    for (const header of setCookies) {
      const [pair = '', ...attributes] = header.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age\s*=\s*(0|-\d+)\s*$/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  /** The `cookie` request header, or undefined when the jar is empty. */
  header(): string | undefined {
    return this.cookies.size ? [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') : undefined;
  }
}

let lastLoopbackHost = 1;

/** A loopback address of its own (127.0.0.2, .3, …): a browser on "another machine" for per-address limits. */
export function nextLoopbackAddress(): string {
  lastLoopbackHost += 1;
  if (lastLoopbackHost > 254) throw new Error('out of loopback addresses');
  return `127.0.0.${lastLoopbackHost}`;
}

export interface BrowserOptions {
  /** Connect from this local address instead of 127.0.0.1 (Linux routes all of 127/8 to loopback). */
  sourceAddress?: string;
}

/**
 * A minimal browser for one host: a cookie jar, `redirect: 'manual'` (each test follows what it
 * means to follow), form posts. Requests go through fetch, or node:http when a source address is
 * chosen (fetch cannot bind one).
 */
export class Browser {
  readonly jar = new CookieJar();

  constructor(readonly baseUrl: string, private readonly options: BrowserOptions = {}) {}

  get(pathOrUrl: string, headers: Record<string, string> = {}): Promise<Reply> {
    return this.send('GET', pathOrUrl, undefined, headers);
  }

  /** POSTs the fields form-encoded, as an HTML form does. */
  postForm(pathOrUrl: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Reply> {
    return this.send('POST', pathOrUrl, new URLSearchParams(fields).toString(), {
      'content-type': 'application/x-www-form-urlencoded', ...headers,
    });
  }

  private async send(method: string, pathOrUrl: string, body: string | undefined, extra: Record<string, string>): Promise<Reply> {
    const url = new URL(pathOrUrl, this.baseUrl);
    const cookie = this.jar.header();
    const headers: Record<string, string> = { ...(cookie ? { cookie } : {}), ...extra };
    const response = this.options.sourceAddress
      ? await requestFrom(this.options.sourceAddress, method, url, headers, body)
      : await fetch(url, { method, headers, body, redirect: 'manual' });
    const setCookies = response.headers.getSetCookie();
    this.jar.absorb(setCookies);
    return { status: response.status, headers: response.headers, text: await response.text(), location: response.headers.get('location'), setCookies };
  }
}

function requestFrom(localAddress: string, method: string, url: URL, headers: Record<string, string>, body?: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, localAddress, family: 4 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        const status = res.statusCode ?? 0;
        const noBody = status === 204 || status === 304;
        resolve(new Response(noBody ? null : Buffer.concat(chunks), { status, headers: pairs }));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Decodes the character references our pages use (`&#39;`, `&amp;`, …). */
export function decodeHtml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === '#') return String.fromCodePoint(ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : Number(ref.slice(1)));
    return ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/** The text of an HTML fragment, tags removed and whitespace collapsed. */
export function textOf(fragment: string): string {
  return decodeHtml(fragment.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();
}

/** The hidden fields of the page's form that posts to `action`. */
/** The fields a browser would send with the form posting to `action` as the page shows it: its hidden inputs and checked checkboxes. */
export function formFields(html: string, action: string): Record<string, string> {
  const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)];
  const form = forms.find(([, attributes]) => attributesOf(attributes ?? '').action === action);
  if (!form) throw new Error(`no form posting to ${action} on this page`);
  const fields: Record<string, string> = {};
  for (const [, attributes] of (form[2] ?? '').matchAll(/<input\b([^>]*)>/g)) {
    const input = attributesOf(attributes ?? '');
    if (input.type === 'hidden' && input.name !== undefined) fields[input.name] = input.value ?? '';
    // A checked checkbox or radio button is sent as a browser sends it (`on` without a value); an unchecked one is not.
    const checkable = input.type === 'checkbox' || input.type === 'radio';
    if (checkable && input.name !== undefined && /\schecked\b/.test(attributes ?? '')) fields[input.name] = input.value ?? 'on';
  }
  return fields;
}

function attributesOf(source: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const [, name, value] of source.matchAll(/([a-zA-Z_:-]+)\s*=\s*"([^"]*)"/g)) attributes[name!.toLowerCase()] = decodeHtml(value ?? '');
  return attributes;
}

/** Signs in through the login form (GET /login for the CSRF cookie and field, then POST). */
export async function signIn(browser: Browser, account: Account, returnTo = '/account'): Promise<Reply> {
  const form = await browser.get(`/login?return_to=${encodeURIComponent(returnTo)}`);
  if (form.status !== 200) throw new Error(`GET /login answered ${form.status}`);
  return browser.postForm('/login', { ...formFields(form.text, '/login'), email: account.user.email, password: account.password });
}

/** Authorization request parameters for the demo client; an override of `undefined` removes one. */
export function authorizationParams(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const params: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: DEMO_CLIENT.clientId,
    redirect_uri: DEMO_CLIENT.redirectUris[0],
    scope: 'read_device',
    state: randomToken(),
    ...overrides,
  };
  return Object.fromEntries(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

export const authorizePath = (params: Record<string, string>) => `/oauth/authorize?${new URLSearchParams(params)}`;

/**
 * Runs an authorization request to its end as a user would: signs in when asked to, answers the
 * consent page with `decision` when shown one, and returns the redirect back to the client.
 */
export async function authorize(
  browser: Browser,
  params: Record<string, string>,
  options: { account?: Account; decision?: 'allow' | 'deny' } = {},
): Promise<URL> {
  let reply = await browser.get(authorizePath(params));
  if (reply.status === 302 && reply.location?.startsWith('/login')) {
    const returnTo = new URL(reply.location, browser.baseUrl).searchParams.get('return_to') ?? '';
    const login = await signIn(browser, options.account ?? ALICE, returnTo);
    if (login.status !== 303 || !login.location) throw new Error(`login answered ${login.status}`);
    reply = await browser.get(login.location);
  }
  if (reply.status === 200) {
    reply = await browser.postForm('/oauth/authorize', { ...formFields(reply.text, '/oauth/authorize'), decision: options.decision ?? 'allow' });
  }
  if ((reply.status !== 302 && reply.status !== 303) || !reply.location) {
    throw new Error(`authorization ended with ${reply.status}: ${textOf(reply.text).slice(0, 200)}`);
  }
  return new URL(reply.location);
}

/** A fresh authorization code for the demo client, with the request that produced it. */
export async function obtainCode(browser: Browser, overrides: Record<string, string | undefined> = {}, account?: Account) {
  const params = authorizationParams(overrides);
  const callback = await authorize(browser, params, { account });
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code in ${callback.href}`);
  return { code, params, callback, redirectUri: params.redirect_uri! };
}

/** Registers a new account directly in the service's table (a user of its own per test). */
export async function createAccount(service: LocalService, overrides: Partial<User> = {}): Promise<Account & { user: User }> {
  const doc = createDocumentClient({ endpoint: service.dynamodbEndpoint });
  try {
    const stamp = formatTimestamp(new Date());
    const id = randomUUID();
    const user: User = {
      id, firstname: 'Test', lastname: `User ${id.slice(0, 8)}`, avatar_url: `/avatars/${id}.png`, gender: 0,
      email: `user-${id}@example.com`, email_confirmed: true, creation_date: stamp, update_date: stamp, ...overrides,
    };
    const password = `password-${randomToken()}`;
    await createUserRepo({ doc, table: service.tableName }).createUser(user, await hashPassword(password));
    return { user, password };
  } finally {
    doc.destroy();
  }
}

/** A signed-in developer (a new account) with a new application named `name`, registered through the console; its page path. */
export async function newDeveloperApp(service: LocalService, name: string): Promise<{ b: Browser; clientId: string; appPath: string }> {
  const account = await createAccount(service);
  const b = new Browser(service.authUrl);
  expect((await signIn(b, account)).status).toBe(303);
  const page = await b.get('/developer');
  const reply = await b.postForm('/developer/apps', {
    ...formFields(page.text, '/developer/apps'),
    name, description: '', website: 'https://hooks.example', redirect_uris: 'https://hooks.example/callback',
  });
  const clientId = /^\/developer\/apps\/([^/]+)\/secret$/.exec(reply.location ?? '')![1]!;
  await b.get(reply.location!); // the client secret, shown once
  return { b, clientId, appPath: `/developer/apps/${clientId}` };
}

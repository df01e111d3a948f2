/*
 * Home Dashboard: an example third-party web application for the Device and User Service.
 * Copy it as a starting point; it uses nothing but Node's standard library and, to verify webhook signatures, the
 * `standardwebhooks` package.
 *
 * The flow (OAuth 2.0 authorization code grant, RFC 6749, with PKCE, RFC 7636):
 *  1. `/` links to the authorization server's authorize endpoint with our client_id, our
 *     registered redirect_uri, the scopes we need, a random `state` and a PKCE code challenge.
 *     The state and the PKCE verifier stay on this server, in the browser's session.
 *  2. There the user signs in and allows (or denies) access; the server then sends the browser
 *     back to `/callback` with `code`, `state` and `iss` (or with `error`).
 *  3. `/callback` checks `state` (the response answers a request this browser started) and `iss`
 *     (it comes from our authorization server, RFC 9207), then exchanges the code for tokens,
 *     server to server, authenticated with the client secret.
 *  4. `/devices` calls the resource API with the access token. When the API answers 401 (the
 *     token expired), the refresh token buys one new pair, and the new refresh token replaces
 *     the old one: each refresh token works once.
 *  5. `/webhooks` receives the service's signed events (Standard Webhooks): it verifies each with
 *     the `standardwebhooks` package and the webhook signing secret, drops duplicates (`webhook-id`)
 *     and stale values (a field is set only by an event with a higher `sequence` than the one that
 *     set it last), and pushes what changed to the open device pages of that user over Server-Sent
 *     Events (`/events`), which update themselves without a reload.
 * Tokens, the client secret and the PKCE verifier never reach the browser or the logs; the
 * browser holds only a random session id. Sessions live in memory here: a real application keeps
 * them in its own store.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export interface ExampleAppOptions {
  /** 0 picks a free port. */
  port: number;
  /** The authorization server, e.g. http://localhost:3001 (also the expected issuer). */
  authUrl: string;
  /** The resource API, e.g. http://localhost:3000. */
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  /** Must be registered for the client; defaults to `<this app's URL>/callback`. */
  redirectUri?: string;
}

export interface ExampleApp {
  url: string;
  /** Where the service should send this application's webhook events. */
  webhookUrl: string;
  /** The webhook signing secret (`whsec_…`) the events are verified with; until set, every event is refused. */
  useWebhookSecret(secret: string): void;
  stop(): Promise<void>;
}

const SCOPE = 'read_user read_device write_device';
// On localhost every port shares cookies, so the name must not clash with the service's own.
const SESSION_COOKIE = 'home_dashboard_session';
const SESSION_IDLE_MS = 8 * 60 * 60 * 1000;
/** How long a started authorization may take (the service's codes live 10 minutes too). */
const AUTHORIZATION_WINDOW_MS = 10 * 60 * 1000;
const TIMEOUT_MS = 10_000;

interface Tokens {
  accessToken: string;
  refreshToken: string;
}

interface Session {
  id: string;
  /** Sent back in our own forms, so another site cannot post them (CSRF). */
  csrf: string;
  lastSeen: number;
  /** An authorization started from this browser and not answered yet. */
  pending?: { state: string; codeVerifier: string; startedAt: number };
  tokens?: Tokens;
  refreshing?: Promise<Tokens | undefined>;
  /** The signed-in user's id (`GET /user`): the webhook events about them go to this session's pages. */
  userId?: string;
  /** A one-time message for the next page. */
  notice?: string;
}

interface Device {
  id: string;
  name: string;
  place: string;
  connected: boolean;
  active: boolean;
}

interface User {
  id: string;
  firstname: string;
  lastname: string;
  /** A path on the resource API (`/avatars/<id>.png`): resolved against its URL, like a link. */
  avatar_url: string;
}

interface ServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint?: string;
}

/** A page that ends the request; thrown from anywhere below. */
class PageError extends Error {
  constructor(readonly status: number, readonly title: string, message: string) {
    super(message);
  }
}

/** The application has no usable tokens (any more): the user must connect again. */
class SignedOutError extends Error {}

/** The token endpoint refused: `error` is its OAuth error code. */
class TokenEndpointError extends Error {
  constructor(readonly status: number, readonly error: string) {
    super(`token endpoint answered ${status} ${error}`);
  }
}

/** Starts the example application on 127.0.0.1. */
export async function startExampleApp(options: ExampleAppOptions): Promise<ExampleApp> {
  const sessions = new Map<string, Session>();
  // Images: the user's avatar, from the resource API.
  const securityHeaders = securityHeadersFor(new URL(options.apiUrl).origin);
  let redirectUri = options.redirectUri ?? '';
  let metadata: Promise<ServerMetadata> | undefined;

  // RFC 8414: the metadata document must name the issuer we were configured with.
  function serverMetadata(): Promise<ServerMetadata> {
    metadata ??= getJson(`${options.authUrl}/.well-known/oauth-authorization-server`).then((body) => {
      const found = body as ServerMetadata;
      if (found.issuer !== options.authUrl) throw new Error(`metadata names issuer ${found.issuer}, expected ${options.authUrl}`);
      return found;
    });
    metadata.catch(() => (metadata = undefined));
    return metadata;
  }

  async function home(session: Session): Promise<Page> {
    if (session.tokens) {
      return {
        title: 'Home Dashboard',
        session,
        body: html`<h1>Your devices are connected</h1>
          <p><a class="button" href="/devices">See your devices</a></p>`,
      };
    }
    if (!session.pending || Date.now() - session.pending.startedAt > AUTHORIZATION_WINDOW_MS) {
      session.pending = { state: randomId(), codeVerifier: randomId(), startedAt: Date.now() };
    }
    const authorize = new URL((await serverMetadata()).authorization_endpoint);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: options.clientId,
      redirect_uri: redirectUri,
      scope: SCOPE,
      state: session.pending.state,
      code_challenge: createHash('sha256').update(session.pending.codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    return {
      title: 'Home Dashboard',
      session,
      body: html`<h1>See all your devices in one place</h1>
        <p>Home Dashboard shows your devices and lets you switch their away mode.
          It needs your permission on the Device and User Service to see your profile and your devices
          and to change them.</p>
        <p><a class="button" href="${authorize.toString()}">Connect your devices</a></p>
        <p class="muted">You will sign in on the Device and User Service, not here: Home Dashboard never sees your password.</p>`,
    };
  }

  async function callback(session: Session, query: URLSearchParams): Promise<string | Page> {
    const pending = session.pending;
    if (!pending || query.get('state') !== pending.state || Date.now() - pending.startedAt > AUTHORIZATION_WINDOW_MS) {
      throw new PageError(400, 'Please start again', 'This answer does not belong to a connection started in this browser, or it came too late.');
    }
    session.pending = undefined; // a state is good for one answer only
    const { issuer } = await serverMetadata();
    if (query.get('iss') !== issuer) {
      throw new PageError(400, 'Please start again', 'This answer did not come from the Device and User Service.');
    }
    const error = query.get('error');
    if (error) {
      return {
        title: 'Not connected',
        session,
        status: 200,
        body: html`<h1>Your devices were not connected</h1>
          <p class="error" role="alert">${describeAuthorizationError(error)}</p>
          <p><a href="/">Back to the start</a></p>`,
      };
    }
    const code = query.get('code');
    if (!code) throw new PageError(400, 'Please start again', 'The answer carried no authorization code.');
    const tokens = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: pending.codeVerifier,
    }).catch((cause: unknown) => {
      if (cause instanceof TokenEndpointError && cause.error === 'invalid_grant') {
        throw new PageError(400, 'Please start again', 'The authorization was already used or has expired.');
      }
      throw cause;
    });
    // A new session id once signed in, so an id planted before sign-in is worth nothing.
    sessions.delete(session.id);
    session.id = randomId();
    sessions.set(session.id, session);
    session.tokens = tokens;
    return '/devices';
  }

  async function devicesPage(session: Session): Promise<string | Page> {
    if (!session.tokens) return '/';
    const [devices, user] = await Promise.all([
      callApi(session, 'GET', '/devices').then((r) => readApi<Device[]>(r, 'your devices')),
      callApi(session, 'GET', '/user').then((r) => readApi<User>(r, 'your profile')),
    ]);
    session.userId = user.id;
    return {
      title: 'Your devices · Home Dashboard',
      session,
      live: true,
      body: html`<div class="hello"><img class="avatar" src="${new URL(user.avatar_url, options.apiUrl).href}" alt="" width="48" height="48">
          <h1>Hello ${user.firstname} ${user.lastname}</h1></div>
        <p id="none" class="muted" ${devices.length === 0 ? '' : html`hidden`}>You have no devices yet.</p>
        <table id="devices" data-csrf="${session.csrf}" ${devices.length === 0 ? html`hidden` : ''}>
          <caption>Your devices. Away mode on means nobody is at home. This page updates itself when a device changes.</caption>
          <thead><tr><th scope="col">Device</th><th scope="col">Connection</th><th scope="col">Away mode</th></tr></thead>
          <tbody>${devices.map((device) => deviceRow(device, session.csrf))}</tbody>
        </table>
        <p id="live" class="muted" role="status" aria-live="polite"></p>`,
    };
  }

  async function toggle(session: Session, deviceId: string, form: URLSearchParams): Promise<string> {
    if (!session.tokens) return '/';
    const name = form.get('name') ?? 'the device';
    // The form carries the wanted state rather than "flip it", so sending it twice changes nothing.
    const active = form.get('active') === 'true';
    const response = await callApi(session, 'PUT', `/devices/${encodeURIComponent(deviceId)}`, { active });
    if (response.status === 204) session.notice = `Away mode is now ${active ? 'on' : 'off'} for ${name}.`;
    else if (response.status === 404) session.notice = `${name} is no longer in your account.`;
    else await readApi(response, 'the device');
    return '/devices';
  }

  async function disconnect(session: Session): Promise<string> {
    const { revocation_endpoint: revoke } = await serverMetadata();
    if (session.tokens && revoke) {
      // RFC 7009: revoking the refresh token ends this application's access for the user.
      await fetch(revoke, {
        method: 'POST',
        headers: { ...clientAuthentication(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: session.tokens.refreshToken, token_type_hint: 'refresh_token' }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      }).then((r) => r.body?.cancel(), () => undefined);
    }
    session.tokens = undefined;
    session.notice = 'Home Dashboard is disconnected from your devices.';
    return '/';
  }

  /** Calls the resource API; on 401 refreshes the tokens once and tries again. */
  async function callApi(session: Session, method: 'GET' | 'PUT', path: string, body?: unknown): Promise<Response> {
    const send = (accessToken: string) => fetch(`${options.apiUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${accessToken}`,
        'cache-control': 'no-cache',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const used = session.tokens?.accessToken;
    if (!used) throw new SignedOutError();
    const response = await send(used);
    if (response.status !== 401) return response;
    await response.body?.cancel();
    const fresh = await refreshedTokens(session, used);
    return send(fresh.accessToken);
  }

  /** New tokens after `rejected` was refused; concurrent callers share one refresh. */
  async function refreshedTokens(session: Session, rejected: string): Promise<Tokens> {
    if (session.tokens && session.tokens.accessToken !== rejected) return session.tokens; // already refreshed
    session.refreshing ??= (async () => {
      const current = session.tokens;
      if (!current) return undefined;
      try {
        session.tokens = await tokenRequest({ grant_type: 'refresh_token', refresh_token: current.refreshToken });
      } catch (error) {
        // invalid_grant: the user withdrew access (or the token was revoked); connect again.
        if (!(error instanceof TokenEndpointError && error.error === 'invalid_grant')) throw error;
        session.tokens = undefined;
      }
      return session.tokens;
    })().finally(() => (session.refreshing = undefined));
    const tokens = await session.refreshing;
    if (!tokens) throw new SignedOutError();
    return tokens;
  }

  /** POST to the token endpoint, form-encoded, authenticated with HTTP Basic (client_secret_basic). */
  async function tokenRequest(params: Record<string, string>): Promise<Tokens> {
    const response = await fetch((await serverMetadata()).token_endpoint, {
      method: 'POST',
      headers: { ...clientAuthentication(), 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(params),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok) throw new TokenEndpointError(response.status, String(body.error ?? 'unknown'));
    if (typeof body.access_token !== 'string' || typeof body.refresh_token !== 'string') {
      throw new Error('token endpoint answered without tokens');
    }
    return { accessToken: body.access_token, refreshToken: body.refresh_token };
  }

  // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined and base64-encoded.
  function clientAuthentication(): { authorization: string } {
    const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
    const pair = `${encode(options.clientId)}:${encode(options.clientSecret)}`;
    return { authorization: `Basic ${Buffer.from(pair).toString('base64')}` };
  }

  // Webhooks: the secret, the ids already handled, the sequence that last set each field of each
  // device, and the open device pages (Server-Sent Events streams) by user.
  let webhook: Webhook | undefined;
  const seenIds = new Set<string>();
  const fieldSequences = new Map<string, number>();
  const streams = new Map<string, Set<ServerResponse>>();

  /** POST /webhooks: a signed event from the service. 204 when taken (or a duplicate), 401 when the signature does not verify. */
  async function receiveWebhook(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req, WEBHOOK_BODY_LIMIT).catch((error: unknown) => {
      if (error instanceof PageError) return undefined;
      throw error;
    });
    if (body === undefined) {
      res.writeHead(413, { 'content-type': 'text/plain; charset=utf-8' }).end('Too large.\n');
      return;
    }
    let event: WebhookEvent;
    try {
      if (!webhook) throw new WebhookVerificationError('no secret yet');
      // Checks the signature over the exact bytes received, and that the timestamp is within 5 minutes.
      event = webhook.verify(body, req.headers as Record<string, string>) as WebhookEvent;
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      res.writeHead(401, { 'content-type': 'text/plain; charset=utf-8' }).end('Signature not verified.\n');
      return;
    }
    const id = String(req.headers['webhook-id']);
    if (!seenIds.has(id)) {
      remember(seenIds, id);
      const update = applyEvent(event);
      if (update) for (const stream of streams.get(update.userId) ?? []) stream.write(`data: ${JSON.stringify(update)}\n\n`);
    }
    // Answer at once: the service waits at most 5 seconds, and retries anything but a 2xx.
    res.writeHead(204).end();
  }

  /** What an event changes on a user's device page, keeping only values newer than those shown. */
  function applyEvent(event: WebhookEvent): PageUpdate | undefined {
    const data = event.data;
    if (event.type === 'grant.revoked') {
      for (const session of sessions.values()) if (session.userId === data.user_id) session.tokens = undefined;
      return { userId: data.user_id, type: 'revoked' };
    }
    if (!event.type.startsWith('device.') || typeof data.device_id !== 'string') return undefined;
    const fresh = (field: string) => {
      const key = `${data.device_id}:${field}`;
      if ((fieldSequences.get(key) ?? -1) >= data.sequence!) return false;
      fieldSequences.set(key, data.sequence!);
      return true;
    };
    switch (event.type) {
      case 'device.updated': {
        const changes = Object.fromEntries(Object.entries(data.changes ?? {}).filter(([field]) => fresh(field)));
        return Object.keys(changes).length ? { userId: data.user_id, type: 'changed', deviceId: data.device_id, changes } : undefined;
      }
      case 'device.connection_changed':
        return fresh('connected') ? { userId: data.user_id, type: 'changed', deviceId: data.device_id, changes: { connected: data.connected } } : undefined;
      case 'device.added':
        return fresh('presence') ? { userId: data.user_id, type: 'added', deviceId: data.device_id, device: data.device } : undefined;
      case 'device.removed':
        return fresh('presence') ? { userId: data.user_id, type: 'removed', deviceId: data.device_id } : undefined;
      default:
        return undefined;
    }
  }

  /** GET /events: the signed-in user's device updates as Server-Sent Events, for as long as the page is open. */
  function openStream(session: Session, res: ServerResponse): void {
    const userId = session.userId;
    if (!session.tokens || !userId) {
      res.writeHead(204).end(); // nothing to follow: EventSource stops on a 204
      return;
    }
    res.writeHead(200, { ...securityHeaders, 'content-type': 'text/event-stream; charset=utf-8' });
    res.write('retry: 3000\n\n');
    const mine = streams.get(userId) ?? new Set();
    streams.set(userId, mine.add(res));
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 25_000);
    res.on('close', () => {
      clearInterval(keepAlive);
      mine.delete(res);
      if (mine.size === 0) streams.delete(userId);
    });
  }

  function sessionOf(req: IncomingMessage): Session {
    const now = Date.now();
    const existing = sessions.get(readCookie(req, SESSION_COOKIE) ?? '');
    if (existing && now - existing.lastSeen < SESSION_IDLE_MS) {
      existing.lastSeen = now;
      return existing;
    }
    for (const [id, old] of sessions) if (now - old.lastSeen >= SESSION_IDLE_MS) sessions.delete(id);
    const session: Session = { id: randomId(), csrf: randomId(), lastSeen: now };
    sessions.set(session.id, session);
    return session;
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const session = sessionOf(req);
    const toggleMatch = /^\/devices\/([A-Za-z0-9-]{1,64})\/toggle$/.exec(url.pathname);
    if (method === 'POST' && url.pathname === '/webhooks') return receiveWebhook(req, res);
    if (method === 'GET' && url.pathname === '/events') return openStream(session, res);
    let result: string | Page;
    try {
      if (method === 'GET' && url.pathname === '/') result = await home(session);
      else if (method === 'GET' && url.pathname === '/callback') result = await callback(session, url.searchParams);
      else if (method === 'GET' && url.pathname === '/devices') result = await devicesPage(session);
      else if (method === 'POST' && (toggleMatch || url.pathname === '/disconnect')) {
        const form = await readForm(req);
        if (form.get('csrf') !== session.csrf) {
          throw new PageError(403, 'Please try again', 'This form has expired. Go back, reload the page and try again.');
        }
        result = toggleMatch ? await toggle(session, toggleMatch[1]!, form) : await disconnect(session);
      } else {
        throw new PageError(404, 'Not found', 'There is no such page.');
      }
    } catch (error) {
      if (error instanceof SignedOutError) {
        session.notice = 'Home Dashboard no longer has access to your devices (it was withdrawn or has ended). Connect again to continue.';
        result = '/';
      } else if (error instanceof PageError) {
        result = { title: error.title, status: error.status, session, body: html`<h1>${error.title}</h1>
          <p class="error" role="alert">${error.message}</p><p><a href="/">Back to the start</a></p>` };
      } else {
        throw error;
      }
    }
    const cookie = `${SESSION_COOKIE}=${session.id}; Path=/; HttpOnly; SameSite=Lax`;
    if (typeof result === 'string') {
      // 303: after a POST the browser follows with GET.
      res.writeHead(method === 'POST' ? 303 : 302, { location: result, 'set-cookie': cookie, ...securityHeaders });
      res.end();
      return;
    }
    res.writeHead(result.status ?? 200, { 'content-type': 'text/html; charset=utf-8', 'set-cookie': cookie, ...securityHeaders });
    res.end(render(result));
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      // Our own messages name no token; a network failure's message names none either.
      console.error(`example app: ${req.method} ${req.url?.split('?')[0]} failed: ${error instanceof Error ? error.message : 'error'}`);
      if (res.headersSent) return res.destroy();
      res.writeHead(502, { 'content-type': 'text/html; charset=utf-8', ...securityHeaders });
      res.end(render({
        title: 'Something went wrong',
        body: html`<h1>Something went wrong</h1><p class="error" role="alert">The Device and User Service could not be reached
          or did not answer as expected. Please try again in a moment.</p><p><a href="/">Back to the start</a></p>`,
      }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const url = `http://localhost:${(server.address() as { port: number }).port}`;
  redirectUri ||= `${url}/callback`;
  return {
    url,
    webhookUrl: `${url}/webhooks`,
    useWebhookSecret: (secret) => {
      webhook = new Webhook(secret);
    },
    stop: () => new Promise((resolve) => {
      for (const open of streams.values()) for (const stream of open) stream.end();
      streams.clear();
      sessions.clear();
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

function describeAuthorizationError(error: string): string {
  switch (error) {
    case 'access_denied': return 'You chose not to give Home Dashboard access to your devices. Nothing was shared.';
    case 'invalid_scope': return 'Home Dashboard asked for a permission the Device and User Service does not know.';
    case 'temporarily_unavailable': return 'The Device and User Service is busy. Please try again in a moment.';
    default: return `The Device and User Service refused the request (${error}).`;
  }
}

/** The JSON body of a successful API answer; anything else ends the page with a message. */
async function readApi<T>(response: Response, what: string): Promise<T> {
  if (response.ok) return (await response.json()) as T;
  await response.body?.cancel();
  if (response.status === 403) throw new PageError(403, 'Missing permission', `Home Dashboard is not allowed to use ${what}. Disconnect and connect again to give it.`);
  throw new Error(`resource API answered ${response.status} for ${what}`);
}

async function getJson(url: string): Promise<unknown> {
  const response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new URLSearchParams(await readBody(req, 4096));
}

/** The request body as text, up to `limit` bytes. */
async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new PageError(413, 'Too large', 'The request is too large.');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Webhook events are small; a larger body is not one. */
const WEBHOOK_BODY_LIMIT = 64 * 1024;
/** How many handled webhook ids are remembered (duplicates come within the retry window; older ones are forgotten first). */
const SEEN_IDS = 10_000;

function remember(ids: Set<string>, id: string): void {
  ids.add(id);
  if (ids.size > SEEN_IDS) ids.delete(ids.values().next().value!);
}

/** A webhook event's body (Standard Webhooks envelope); the members read here. */
interface WebhookEvent {
  type: string;
  timestamp: string;
  data: {
    user_id: string;
    device_id?: string;
    sequence?: number;
    changes?: Partial<Device>;
    connected?: boolean;
    device?: Device;
  };
}

/** What an open device page is told. */
type PageUpdate =
  | { userId: string; type: 'changed'; deviceId: string; changes: Partial<Device> }
  | { userId: string; type: 'added'; deviceId: string; device?: Device }
  | { userId: string; type: 'removed'; deviceId: string }
  | { userId: string; type: 'revoked' };

function readCookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

const randomId = () => randomBytes(32).toString('base64url');

class Html {
  constructor(readonly value: string) {}
}

const escape = (value: unknown) => String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Tagged template: every interpolated value is escaped unless it is already rendered Html. */
function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  const rendered = (value: unknown): string =>
    Array.isArray(value) ? value.map(rendered).join('') : value instanceof Html ? value.value : escape(value);
  return new Html(strings.reduce((out, string, i) => out + rendered(values[i - 1]) + string));
}

function deviceRow(device: Device, csrf: string): Html {
  const want = !device.active;
  return html`<tr data-device="${device.id}">
    <td><span class="name">${device.name}</span><br><span class="muted place">${device.place}</span></td>
    <td class="state"><span class="${device.connected ? 'dot on' : 'dot'}"></span><span class="connection">${device.connected ? 'Connected' : 'Offline'}</span></td>
    <td><form method="post" action="/devices/${device.id}/toggle" class="toggle">
      <input type="hidden" name="csrf" value="${csrf}">
      <input type="hidden" name="name" value="${device.name}">
      <input type="hidden" name="active" value="${String(want)}">
      <strong>${device.active ? 'On' : 'Off'}</strong>
      <button type="submit" aria-label="${`Turn ${want ? 'on' : 'off'} away mode for ${device.name}`}">Turn ${want ? 'on' : 'off'}</button>
    </form></td>
  </tr>`;
}

interface Page {
  title: string;
  body: Html;
  status?: number;
  session?: Session;
  /** Follows the user's device events (/events) and updates the device table in place. */
  live?: boolean;
}

// The device page's only script: it applies the updates /events sends to the table, with DOM
// methods only (no HTML from the network), and says what changed in the live region.
const LIVE_SCRIPT = `(() => {
const table = document.getElementById('devices'), body = table.tBodies[0], live = document.getElementById('live');
const say = (text) => { live.textContent = text; };
const rowOf = (id) => body.querySelector('tr[data-device="' + CSS.escape(id) + '"]');
function setAway(row, active) {
  const form = row.querySelector('form'), name = row.querySelector('.name').textContent;
  form.querySelector('strong').textContent = active ? 'On' : 'Off';
  form.elements.active.value = String(!active);
  const button = form.querySelector('button');
  button.textContent = 'Turn ' + (active ? 'off' : 'on');
  button.setAttribute('aria-label', 'Turn ' + (active ? 'off' : 'on') + ' away mode for ' + name);
}
function setName(row, name) {
  row.querySelector('.name').textContent = name;
  row.querySelector('form').elements.name.value = name;
  setAway(row, row.querySelector('strong').textContent === 'On');
}
function setConnected(row, connected) {
  row.querySelector('.dot').className = connected ? 'dot on' : 'dot';
  row.querySelector('.connection').textContent = connected ? 'Connected' : 'Offline';
}
function addRow(id, device) {
  const row = body.rows[0] ? body.rows[0].cloneNode(true) : null;
  if (!row || !device) { location.reload(); return; }
  row.dataset.device = id;
  row.querySelector('form').action = '/devices/' + encodeURIComponent(id) + '/toggle';
  row.querySelector('.place').textContent = device.place;
  setName(row, device.name); setConnected(row, device.connected); setAway(row, device.active);
  body.append(row); table.hidden = false; document.getElementById('none').hidden = true;
}
const source = new EventSource('/events');
source.onmessage = (message) => {
  const update = JSON.parse(message.data);
  if (update.type === 'revoked') { source.close(); say('Home Dashboard no longer has access to your devices. Reload to connect again.'); return; }
  if (update.type === 'added') { if (!rowOf(update.deviceId)) addRow(update.deviceId, update.device); say('A device was added.'); return; }
  const row = rowOf(update.deviceId);
  if (!row) return;
  const name = row.querySelector('.name').textContent;
  if (update.type === 'removed') { row.remove(); say(name + ' was removed.'); return; }
  const c = update.changes;
  if ('name' in c) setName(row, c.name);
  if ('place' in c) row.querySelector('.place').textContent = c.place;
  if ('connected' in c) setConnected(row, c.connected);
  if ('active' in c) setAway(row, c.active);
  say(row.querySelector('.name').textContent + ' changed: ' + Object.keys(c).map((k) => k === 'active' ? 'away mode ' + (c.active ? 'on' : 'off') : k === 'connected' ? (c.connected ? 'connected' : 'offline') : k + ' ' + c[k]).join(', ') + '.');
};
})();`;

// Mobile first: one column edge to edge on a phone, a card from 40rem.
const STYLE = `*,*::before,*::after{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1d2433;background:#f5f7fa;overflow-wrap:break-word}
header{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem 1rem;padding:.5rem 1rem;background:#14532d;color:#fff}
header strong{margin-right:auto}header form{margin:0}header span{font-size:.875rem}
main{max-width:46rem;margin:0 auto;padding:1rem;background:#fff}
h1{font-size:1.375rem;line-height:1.25;margin:0 0 1rem}a{color:#166534}
.hello{display:flex;align-items:center;gap:.75rem;margin-bottom:1rem}.hello h1{margin:0}.avatar{flex:none;border-radius:50%;border:1px solid #d5dbe5}
.button,button{display:inline-block;min-height:2.5rem;padding:.45rem 1rem;border:1px solid #166534;border-radius:.35rem;background:#166534;color:#fff;font:inherit;text-decoration:none;cursor:pointer}
header button{background:transparent;border-color:#fff}
table{width:100%;border-collapse:collapse}caption{text-align:left;color:#5b6477;padding-bottom:.5rem}
th,td{text-align:left;padding:.5rem .35rem;border-bottom:1px solid #d5dbe5;vertical-align:top}
form.toggle{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem .75rem;margin:0}form.toggle strong{min-width:2rem}
form.toggle button{padding:.2rem .7rem;background:#fff;color:#166534}
td.state{white-space:nowrap}.dot{display:inline-block;width:.6rem;height:.6rem;margin-right:.4rem;border-radius:50%;background:#9aa3b2}.dot.on{background:#16a34a}
.muted{color:#5b6477}.notice{margin:0 0 1rem;padding:.6rem .8rem;background:#ecfdf3;border:1px solid #a7d7b8;border-radius:.35rem}
.error{padding:.6rem .8rem;color:#a4262c;background:#fdecee;border:1px solid #f1b7bc;border-radius:.35rem}
@media (min-width:40rem){header{padding:.75rem 1.5rem}main{margin:2rem auto;padding:1.5rem;border:1px solid #d5dbe5;border-radius:.5rem}th,td{padding:.5rem}}`;

const securityHeadersFor = (imageOrigin: string) => ({
  'cache-control': 'no-store',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${sha256(STYLE)}'; script-src 'sha256-${sha256(LIVE_SCRIPT)}'; connect-src 'self'; img-src ${imageOrigin}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
});

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}

function render(page: Page): string {
  const connected = page.session?.tokens;
  const notice = page.session?.notice;
  if (page.session) page.session.notice = undefined;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title><style>${new Html(STYLE)}</style></head>
<body><header><strong>Home Dashboard</strong><span>example application</span>
${connected ? html`<form method="post" action="/disconnect"><input type="hidden" name="csrf" value="${page.session!.csrf}"><button type="submit">Disconnect</button></form>` : ''}
</header>
<main>${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}${page.body}</main>
${page.live ? html`<script>${new Html(LIVE_SCRIPT)}</script>` : ''}</body></html>`.value;
}

import { EventEmitter } from 'node:events';

// The classic (unnamed) device shadow of AWS IoT Core, in memory, for the local broker
// (local/iot-broker.ts: the MQTT topics) and the data-plane stand-in (local/iot-data-plane.ts:
// UpdateThingShadow, GetThingShadow, DeleteThingShadow), with the semantics of the AWS IoT Core
// Developer Guide ("Device Shadow service documents", "Device Shadow MQTT topics", "Diagnosing
// shadows"): only `desired` and `reported` are stored; an update merges objects, replaces arrays,
// and a null removes a member (`"desired": null` the section); each accepted update adds one to the
// version; a request with a `version` other than the shadow's is refused (409); the stored state,
// desired and reported together, is at most 8 KB (413); at most 6 levels of nesting (400); a
// `clientToken` (at most 64 bytes) comes back in every answer to its request; the delta is published
// whenever an update leaves a member it touched different between desired and reported (a new
// desired value, or a report that does not match it: the device is told again).

/** The largest stored state, desired and reported together, as JSON bytes (metadata not counted). */
export const SHADOW_STATE_MAX_BYTES = 8 * 1024;
const MAX_DEPTH = 6;
const CLIENT_TOKEN_MAX_BYTES = 64;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };
export interface ShadowState { desired?: Obj; reported?: Obj }
type Metadata = { desired?: Obj; reported?: Obj };

/** A refused request, as IoT Core answers it on `…/rejected` (and as the HTTP API's status). */
export interface ShadowError { code: number; message: string; timestamp: number; clientToken?: string }

/** What one accepted update publishes: its answer, the delta (if the desired state now differs), the documents. */
export interface ShadowUpdate {
  accepted: Record<string, unknown>;
  delta?: Record<string, unknown>;
  documents: Record<string, unknown>;
}

interface Stored { state: ShadowState; metadata: Metadata; version: number; deleted: boolean }

export interface ShadowStore {
  /** Emits `updated` (thing name, ShadowUpdate) after every accepted update, whoever asked for it. */
  events: EventEmitter;
  update(thing: string, payload: Buffer | string): { ok: ShadowUpdate } | { error: ShadowError };
  get(thing: string, payload?: Buffer | string): { ok: Record<string, unknown> } | { error: ShadowError };
  delete(thing: string, payload?: Buffer | string): { ok: Record<string, unknown> } | { error: ShadowError };
}

const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);
const now = () => Math.floor(Date.now() / 1000);
const fail = (code: number, message: string, clientToken?: string): { error: ShadowError } =>
  ({ error: { code, message, timestamp: now(), ...(clientToken !== undefined ? { clientToken } : {}) } });

function depth(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depth));
  if (isObj(value)) return 1 + Math.max(0, ...Object.values(value).map(depth));
  return 0;
}

/** `base` with `patch` merged in: objects member by member, a null removes, anything else replaces; empty objects vanish. */
function merge(base: Obj | undefined, patch: Obj): Obj | undefined {
  const out: Obj = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (isObj(value)) {
      const merged = merge(isObj(out[key]) ? out[key] : undefined, value);
      if (merged) out[key] = merged;
      else delete out[key];
    } else out[key] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The timestamps of what `patch` set, shaped as it is (the metadata IoT Core keeps per leaf). */
function stamps(patch: Obj, at: number): Obj {
  return Object.fromEntries(Object.entries(patch).map(([key, value]) => [key, isObj(value) ? stamps(value, at) : { timestamp: at }]));
}

/** What of `desired` the reported state does not equal (recursively for objects). */
export function deltaOf(desired: Obj | undefined, reported: Obj | undefined): Obj | undefined {
  if (!desired) return undefined;
  const out: Obj = {};
  for (const [key, value] of Object.entries(desired)) {
    const seen = reported?.[key];
    if (isObj(value) && isObj(seen)) {
      const inner = deltaOf(value, seen);
      if (inner) out[key] = inner;
    } else if (JSON.stringify(value) !== JSON.stringify(seen)) out[key] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function pick(metadata: Obj | undefined, shape: Obj): Obj {
  return Object.fromEntries(Object.keys(shape).map((key) => [key, isObj(shape[key]) && isObj(metadata?.[key]) ? pick(metadata[key] as Obj, shape[key] as Obj) : metadata?.[key] ?? null]));
}

function parse(payload: Buffer | string | undefined): { body: Obj } | { error: ShadowError } {
  const text = payload === undefined ? '' : payload.toString();
  if (text.trim() === '') return { body: {} };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return fail(400, 'Invalid JSON');
  }
  if (!isObj(body)) return fail(400, 'Invalid JSON');
  const token = body.clientToken;
  if (token !== undefined && (typeof token !== 'string' || Buffer.byteLength(token) > CLIENT_TOKEN_MAX_BYTES)) return fail(400, 'Invalid clientToken');
  return { body };
}

/** A fresh, empty shadow service (one per broker). */
export function createShadowStore(): ShadowStore {
  const shadows = new Map<string, Stored>();
  const events = new EventEmitter();
  const live = (thing: string) => {
    const shadow = shadows.get(thing);
    return shadow && !shadow.deleted ? shadow : undefined;
  };
  const notFound = (thing: string, clientToken?: string) => fail(404, `No shadow exists with name: '${thing}'`, clientToken);

  return {
    events,
    update(thing, payload) {
      const parsed = parse(payload);
      if ('error' in parsed) return parsed;
      const { body } = parsed;
      const clientToken = body.clientToken as string | undefined;
      if (!('state' in body)) return fail(400, 'Missing required node: state', clientToken);
      const { state } = body;
      if (!isObj(state)) return fail(400, 'State node must be an object', clientToken);
      if (Object.keys(state).some((key) => key !== 'desired' && key !== 'reported')) return fail(400, 'State contains an invalid node', clientToken);
      for (const section of ['desired', 'reported'] as const) {
        if (section in state && state[section] !== null && !isObj(state[section])) {
          return fail(400, `${section === 'desired' ? 'Desired' : 'Reported'} node must be an object`, clientToken);
        }
      }
      if (depth(state) > MAX_DEPTH + 1) return fail(400, `JSON contains too many levels of nesting; maximum is ${MAX_DEPTH}`, clientToken);
      if (body.version !== undefined && !(typeof body.version === 'number' && Number.isSafeInteger(body.version) && body.version >= 0)) {
        return fail(400, 'Invalid version', clientToken);
      }
      const old = live(thing);
      const previousVersion = shadows.get(thing)?.version ?? 0;
      if (body.version !== undefined && body.version !== (old?.version ?? 0)) return fail(409, 'Version conflict', clientToken);

      const at = now();
      const next: Stored = { state: { ...old?.state }, metadata: { ...old?.metadata }, version: previousVersion + 1, deleted: false };
      for (const section of ['desired', 'reported'] as const) {
        if (!(section in state)) continue;
        const patch = state[section];
        const merged = patch === null ? undefined : merge(next.state[section], patch as Obj);
        const meta = patch === null ? undefined : merge(next.metadata[section], stamps(patch as Obj, at));
        if (merged) next.state[section] = merged;
        else delete next.state[section];
        if (merged && meta) next.metadata[section] = meta;
        else delete next.metadata[section];
      }
      if (Buffer.byteLength(JSON.stringify(next.state)) > SHADOW_STATE_MAX_BYTES) return fail(413, 'The payload exceeds the maximum size allowed', clientToken);
      shadows.set(thing, next);

      const token = clientToken !== undefined ? { clientToken } : {};
      const requestMeta: Metadata = {};
      for (const section of ['desired', 'reported'] as const) {
        if (isObj(state[section])) requestMeta[section] = stamps(state[section] as Obj, at);
      }
      const accepted = { state, metadata: requestMeta, version: next.version, timestamp: at, ...token };
      const delta = deltaOf(next.state.desired, next.state.reported);
      const snapshot = (s: Stored) => ({ state: s.state, metadata: s.metadata, version: s.version });
      const documents = { ...(old ? { previous: snapshot(old) } : {}), current: snapshot(next), timestamp: at, ...token };
      // Published whenever the update touched a member that now differs between desired and reported:
      // a new desired value, or a report that does not match the desired one (the device is told again).
      const touched = new Set([...Object.keys(isObj(state.desired) ? state.desired : {}), ...Object.keys(isObj(state.reported) ? state.reported : {})]);
      const publishDelta = delta !== undefined && Object.keys(delta).some((key) => touched.has(key));
      const update: ShadowUpdate = {
        accepted, documents,
        ...(publishDelta ? { delta: { version: next.version, timestamp: at, state: delta, metadata: pick(next.metadata.desired, delta), ...token } } : {}),
      };
      events.emit('updated', thing, update);
      return { ok: update };
    },
    get(thing, payload) {
      const parsed = parse(payload);
      if ('error' in parsed) return parsed;
      const clientToken = parsed.body.clientToken as string | undefined;
      const shadow = live(thing);
      if (!shadow) return notFound(thing, clientToken);
      const delta = deltaOf(shadow.state.desired, shadow.state.reported);
      return {
        ok: {
          state: { ...shadow.state, ...(delta ? { delta } : {}) }, metadata: shadow.metadata, version: shadow.version, timestamp: now(),
          ...(clientToken !== undefined ? { clientToken } : {}),
        },
      };
    },
    delete(thing, payload) {
      const parsed = parse(payload);
      if ('error' in parsed) return parsed;
      const clientToken = parsed.body.clientToken as string | undefined;
      const shadow = live(thing);
      if (!shadow) return notFound(thing, clientToken);
      // A deleted shadow keeps its version: the next one goes on from it.
      shadow.deleted = true;
      shadow.state = {};
      shadow.metadata = {};
      return { ok: { version: shadow.version, timestamp: now(), ...(clientToken !== undefined ? { clientToken } : {}) } };
    },
  };
}

/** The request topics of a thing's classic shadow a device publishes to, and what each asks. */
export function shadowRequestOf(topic: string): { thing: string; operation: 'update' | 'get' | 'delete' } | undefined {
  const match = /^\$aws\/things\/([^/]+)\/shadow\/(update|get|delete)$/.exec(topic);
  return match ? { thing: match[1]!, operation: match[2] as 'update' | 'get' | 'delete' } : undefined;
}

/** `$aws/things/<thing>/shadow`: the root of a thing's classic shadow topics. */
export const shadowTopic = (thing: string) => `$aws/things/${thing}/shadow`;

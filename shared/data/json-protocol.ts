import { marshall, unmarshall, type NativeAttributeValue } from '@aws-sdk/util-dynamodb';
import type { KeyNodes } from '#shared/data/commands';

// DynamoDB's JSON protocol as the document client speaks it: plain values marshalled to attribute
// values where a command's key nodes say so (shared/data/commands.ts), binary values as base64, and
// an error answer turned into the error the SDK throws.

/** A marshalled request as DynamoDB's JSON request body. */
export function requestBody(wire: unknown): string {
  return JSON.stringify(wire, binaryAsBase64);
}

/** The members `nodes` name of a request, marshalled (undefined members dropped, as the service has always asked). */
export function toWire(input: Record<string, unknown>, nodes: KeyNodes): Record<string, unknown> {
  return walk(input, nodes, marshallValue) as Record<string, unknown>;
}

/** An answer's members `nodes` name, unmarshalled to plain values (numbers as numbers). */
export function fromWire(output: Record<string, unknown>, nodes: KeyNodes): Record<string, unknown> {
  return walk(output, nodes, unmarshallValue) as Record<string, unknown>;
}

const marshallValue = (value: unknown) => marshall(value as NativeAttributeValue, { removeUndefinedValues: true, convertTopLevelContainer: true });
const unmarshallValue = (value: unknown) => unmarshall(value as never, { convertWithoutMapWrapper: true });

/** `value` with the members its key nodes name converted by `convert` (the rest as they are). */
function walk(value: unknown, nodes: KeyNodes, convert: (value: unknown) => unknown): unknown {
  if (value === undefined) return undefined;
  if (nodes === null) return convert(value);
  const named = Object.keys(nodes);
  if (named.length === 0) return mapEntries(value, (entry) => (entry === undefined ? undefined : convert(entry)));
  const children = nodes as Record<string, KeyNodes>;
  if (named.length === 1 && named[0] === '*') return mapEntries(value, (entry) => walk(entry, children['*']!, convert));
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const member of named) {
    const converted = walk(copy[member], children[member]!, convert);
    if (converted !== undefined) copy[member] = converted;
  }
  return copy;
}

function mapEntries(value: unknown, convert: (entry: unknown) => unknown): unknown {
  if (Array.isArray(value)) return value.map(convert);
  const mapped: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
    const converted = convert(entry);
    if (converted !== undefined) mapped[key] = converted;
  }
  return mapped;
}

/** JSON carries a binary attribute value (B, BS) as base64 (DynamoDB's JSON protocol). */
function binaryAsBase64(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const original = this[key];
  return original instanceof Uint8Array ? Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString('base64') : value;
}

/** The bytes of a binary attribute value in an answer: only B and BS hold a string (or strings) in DynamoDB's JSON. */
function binaryFromBase64(key: string, value: unknown): unknown {
  if (key === 'B' && typeof value === 'string') return new Uint8Array(Buffer.from(value, 'base64'));
  if (key === 'BS' && Array.isArray(value)) return value.map((entry) => (typeof entry === 'string' ? new Uint8Array(Buffer.from(entry, 'base64')) : entry));
  return value;
}

/** An answer's JSON object (undefined for anything else: an error page of a proxy, a cut answer). */
export function parseAnswer(text: string): Record<string, unknown> | undefined {
  try {
    // The reviver only when the answer can hold a binary value: it costs a call per member.
    const parsed: unknown = /"BS?":/.test(text) ? JSON.parse(text, binaryFromBase64) : JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * DynamoDB's error answer as the SDK throws it: named by `__type` (after the `#`), with the
 * answer's other members (CancellationReasons, a failed condition's Item), `$fault` and `$metadata`.
 */
export function serviceError(status: number, headers: Record<string, string>, body: Record<string, unknown> | undefined, $metadata: object): Error {
  const { __type, message, Message, ...members } = body ?? {};
  const type = String(__type ?? headers['x-amzn-errortype'] ?? (status >= 500 ? 'InternalServerError' : `HttpError${status}`));
  const name = type.slice(type.lastIndexOf('#') + 1).split(':')[0];
  const error = new Error(String(message ?? Message ?? name));
  return Object.assign(error, members, { name, $fault: status >= 500 ? 'server' : 'client', $metadata });
}


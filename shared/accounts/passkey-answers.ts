import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { normalizeName } from '#shared/domain/user';

// What a browser sends of a passkey, read without trusting it: a passkey's name, and a ceremony's
// answer (passkeys.ts verifies what this reads).

/** The longest passkey name, in characters after normalizeName. */
export const MAX_PASSKEY_NAME = 50;

/** A passkey's name as stored (normalizeName), or undefined when empty or too long. */
export function passkeyName(typed: string): string | undefined {
  const name = normalizeName(typed);
  return name.length >= 1 && [...name].length <= MAX_PASSKEY_NAME ? name : undefined;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
// The pattern asks one character at least.
const isB64 = (value: unknown, max = 4096): value is string => typeof value === 'string' && value.length <= max && BASE64URL.test(value);
const USER_ID = /^[0-9A-Za-z-]{1,64}$/;

/** The value of a JSON text, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON.
  }
  return undefined;
}

/** A ceremony's answer as the browser sent it, with what its client data says. */
interface ReadResponse<R> {
  response: R;
  credentialId: string;
  challenge: string;
  origin: string;
  /** A sign-in's user handle: the id of the user the passkey was registered to. */
  userId?: string;
}

/**
 * Reads a browser's answer (the JSON of a PublicKeyCredential, as @simplewebauthn/browser gives
 * it) without trusting it: the fields a ceremony needs, each base64url and bounded, and the client
 * data's type, challenge and origin. Undefined when anything is missing or malformed.
 */
export function readPasskeyResponse(json: string, kind: 'create'): ReadResponse<RegistrationResponseJSON> | undefined;
export function readPasskeyResponse(json: string, kind: 'get'): ReadResponse<AuthenticationResponseJSON> | undefined;
export function readPasskeyResponse(json: string, kind: 'create' | 'get'): ReadResponse<RegistrationResponseJSON | AuthenticationResponseJSON> | undefined {
  // A value that is no object (a string, a number) has none of the fields asked below: only null
  // and undefined (not JSON) must be told apart before reading them.
  const value = parseJson(json);
  if (value === null || value === undefined) return undefined;
  const credential = value as { id?: unknown; rawId?: unknown; type?: unknown; response?: Record<string, unknown> | null };
  const inner = credential.response;
  if (!isB64(credential.id, 1400) || credential.rawId !== credential.id || credential.type !== 'public-key' || inner === null || inner === undefined) return undefined;
  if (!isB64(inner.clientDataJSON)) return undefined;
  const needed = kind === 'create' ? [inner.attestationObject] : [inner.authenticatorData, inner.signature];
  if (!needed.every((field) => isB64(field, 8192))) return undefined;
  const clientData = parseJson(Buffer.from(inner.clientDataJSON, 'base64url').toString('utf8')) as { type?: unknown; challenge?: unknown; origin?: unknown } | null | undefined;
  if (clientData === null || clientData === undefined) return undefined;
  if (clientData.type !== `webauthn.${kind}` || !isB64(clientData.challenge, 128) || typeof clientData.origin !== 'string') return undefined;
  let userId: string | undefined;
  if (kind === 'get') {
    if (!isB64(inner.userHandle, 128)) return undefined;
    userId = Buffer.from(inner.userHandle, 'base64url').toString('utf8');
    if (!USER_ID.test(userId)) return undefined;
  }
  return {
    response: value as RegistrationResponseJSON | AuthenticationResponseJSON,
    credentialId: credential.id, challenge: clientData.challenge, origin: clientData.origin, userId,
  };
}

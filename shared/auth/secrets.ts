import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A 256-bit random token, base64url (codes, refresh tokens, client secrets, session ids). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The stored form of a high-entropy secret: SHA-256, base64url. A slow password hash would add
 * nothing for 256-bit random values and would cost CPU on every token request.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

/** Constant-time comparison of two strings (of any length). */
export function safeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

// A rotated refresh token keeps its successor encrypted under a key derived from itself, so the
// same successor can be handed back to a retry of the same token, and the table alone reveals nothing.
const keyFrom = (token: string) => createHash('sha256').update(`successor-key:${token}`).digest();

/** Encrypts `secret` so that only a holder of `token` can read it (AES-256-GCM). */
export function sealWith(token: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFrom(token), iv);
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join('.');
}

/** Reverses sealWith; throws when `token` is not the one it was sealed with. */
export function openWith(token: string, sealed: string): string {
  const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  const decipher = createDecipheriv('aes-256-gcm', keyFrom(token), iv!);
  decipher.setAuthTag(tag!);
  return Buffer.concat([decipher.update(body!), decipher.final()]).toString('utf8');
}

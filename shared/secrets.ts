import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// Random secrets, their stored form and their comparison: what the repositories (links, sessions,
// throttle records, mail counts), the CSRF check and the authorization server all use, so it sits
// below them (shared/oauth/sealing.ts keeps what only the authorization server does with them).

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

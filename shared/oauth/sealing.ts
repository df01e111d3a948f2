import { createCipheriv, createDecipheriv, createHash, createSecretKey, randomBytes } from 'node:crypto';

// Random tokens, their hashes and their comparison live in shared/secrets.ts, below the data layer
// that stores them; this module keeps what only the token service uses.

// A rotated refresh token keeps its successor encrypted under a key derived from itself, so the
// same successor can be handed back to a retry of the same token, and the table alone reveals nothing.
// The key is a KeyObject: given bytes, Node 24's cipher first checks whether they are a KeyObject or
// a CryptoKey by throwing and catching an error, which made each sealing four times as costly.
const keyFrom = (token: string) => createSecretKey(createHash('sha256').update(`successor-key:${token}`).digest());

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

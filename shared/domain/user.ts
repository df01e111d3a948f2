/** A user as docs/api.md#user shows it. */
export interface User {
  id: string;
  firstname: string;
  lastname: string;
  avatar_url: string;
  /** 0 = undefined, 1 = male, 2 = female */
  gender: 0 | 1 | 2;
  email: string;
  email_confirmed: boolean;
  creation_date: string;
  update_date: string;
}

export const USER_FIELDS = [
  'id', 'firstname', 'lastname', 'avatar_url', 'gender', 'email',
  'email_confirmed', 'creation_date', 'update_date',
] as const satisfies readonly (keyof User)[];

/** Projects a stored item onto the public User shape; stored secrets never pass. */
export function toUser(item: Record<string, unknown>): User {
  return Object.fromEntries(USER_FIELDS.map((field) => [field, item[field]])) as unknown as User;
}

/** The longest address an account can have (RFC 5321's path limit); sign-up refuses longer ones. */
export const MAX_EMAIL_LENGTH = 254;

/** E-mail addresses are compared case-insensitively and without surrounding space. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The longest first or last name, in characters (code points) after normalizeName. */
export const MAX_NAME_LENGTH = 100;

/**
 * A name as stored: Unicode NFC; control, format (zero-width and bidirectional overrides among
 * them), private-use and unassigned characters dropped; every run of white space (line breaks
 * included) one space; trimmed. Empty when nothing printable is left.
 */
export function normalizeName(name: string): string {
  return name.normalize('NFC').replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, ' ').replace(/\p{C}/gu, '').replace(/\s+/gu, ' ').trim();
}

/** A user as SPEC.md §2.1 shows it. */
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

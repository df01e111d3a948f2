/** The OAuth scopes of docs/api.md#scopes, and what each one grants, in words a user understands. */
export const SCOPES = {
  read_user: 'Read your profile (name, e-mail address, avatar)',
  read_device: 'See your devices, where they are and their state',
  write_device: 'Rename your devices and change their place, away mode and sound',
} as const;

export type Scope = keyof typeof SCOPES;

export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

/** Splits a space-delimited scope string (RFC 6749 §3.3); empty members are ignored. */
export function parseScopeString(value: string): string[] {
  return value.split(' ').filter((s) => s !== '');
}

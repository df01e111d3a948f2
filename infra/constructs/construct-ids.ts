/**
 * `get-user` → `GetUser`, `auth` → `Auth`: the construct ids built from the route table's names.
 * The deployed logical ids derive from them, so changing one replaces the resource.
 */
export function pascal(text: string): string {
  return text.replace(/(^|-)([a-z])/g, (_, __, c: string) => c.toUpperCase());
}

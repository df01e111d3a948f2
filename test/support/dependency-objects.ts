// What test/unit/layout.test.ts holds handlers to: a handler calls a service bound in
// shared/runtime.ts and builds no object of the runtime's repositories to hand to one.

/** The objects shared/runtime.ts builds on first use (its repositories, the batch reader, the queue…), by name. */
export function runtimeObjects(runtimeText: string): Set<string> {
  return new Set([...runtimeText.matchAll(/^export const (\w+) = \/\* @__PURE__ \*\/ onFirstUse\(/gm)].map((match) => match[1]!));
}

/**
 * The object literals of a handler's `text` that hold one of `objects` it imports from shared/runtime.ts
 * (`{ batch, users }`, `{ repo: users }`): a dependency object, built by hand.
 */
export function dependencyObjects(text: string, objects: ReadonlySet<string>): string[] {
  const imported = [...text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'#shared\/runtime'/g)]
    .flatMap((match) => match[1]!.split(',').map((name) => name.trim().split(/\s+as\s+/).pop()!))
    .filter((name) => objects.has(name));
  if (imported.length === 0) return [];
  const code = text.replace(/^import[^;]*;/gm, '');
  return [...code.matchAll(/\{([^{}]*)\}/g)].map((match) => match[1]!).filter((members) =>
    members.split(',').some((member) => imported.includes(member.split(':').pop()!.trim()))).map((members) => `{${members.replace(/\s+/g, ' ')}}`);
}

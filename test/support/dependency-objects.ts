// What test/unit/layout.test.ts holds handlers to: a handler calls a service bound in
// shared/runtime.ts and hands none of the runtime's repositories to one, whether in an object it
// builds or as an argument of its own.

/** The objects a composition root's file (shared/runtime-repos.ts: the repositories, the batch reader, the queue) builds on first use, by name. */
export function runtimeObjects(runtimeText: string): Set<string> {
  return new Set([...runtimeText.matchAll(/^export const (\w+) = \/\* @__PURE__ \*\/ onFirstUse\(/gm)].map((match) => match[1]!));
}

/** The names of `objects` that a handler's `text` imports from shared/runtime.ts (under the name it gives them). */
function importedObjects(text: string, objects: ReadonlySet<string>): string[] {
  return [...text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'#shared\/runtime'/g)]
    .flatMap((match) => match[1]!.split(',').map((name) => name.trim().split(/\s+as\s+/)))
    .filter((names) => objects.has(names[0]!)).map((names) => names.pop()!);
}

/**
 * What a handler's `text` hands to a service of the runtime's `objects` it imports from
 * shared/runtime.ts: an object literal that holds one (`{ batch, users }`, `{ repo: users }`), a
 * dependency object built by hand; or a call given one as an argument (`issueCode(grants, …)`).
 * A method called on one (`users.findUser(…)`), or its result passed on, is neither.
 */
export function dependencyObjects(text: string, objects: ReadonlySet<string>): string[] {
  const imported = importedObjects(text, objects);
  if (imported.length === 0) return [];
  const code = text.replace(/^import[^;]*;/gm, '');
  const literals = [...code.matchAll(/\{([^{}]*)\}/g)].map((match) => match[1]!).filter((members) =>
    members.split(',').some((member) => imported.includes(member.split(':').pop()!.trim()))).map((members) => `{${members.replace(/\s+/g, ' ')}}`);
  const calls = callsIn(code).filter(({ args }) => splitArguments(args).some((arg) => imported.includes(arg)))
    .map(({ callee, args }) => `${callee}(${args.replace(/\s+/g, ' ')})`);
  return [...literals, ...calls];
}

/** Every call of `code` (nested ones too), with its callee and the text of its arguments. */
function callsIn(code: string): { callee: string; args: string }[] {
  return [...code.matchAll(/([\w.]+)\s*\(/g)].filter(([, callee]) => !['if', 'for', 'while', 'switch', 'catch', 'return'].includes(callee!)).map((match) => {
    const start = match.index + match[0].length;
    let depth = 1;
    let end = start;
    for (; end < code.length && depth > 0; end++) {
      if (code[end] === '(') depth++;
      if (code[end] === ')') depth--;
    }
    return { callee: match[1]!, args: code.slice(start, end - 1) };
  });
}

/** The top-level arguments of a call's argument text, trimmed. */
function splitArguments(args: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of args) {
    if ('([{'.includes(char)) depth++;
    if (')]}'.includes(char)) depth--;
    if (char === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else {
      current += char;
    }
  }
  return [...parts, current.trim()];
}

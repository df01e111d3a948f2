import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ENV, MAIL_ENV, WEBHOOK_ENV } from '#shared/config';
import type { FunctionNeeds } from '#shared/declaration';
import { dependencyObjects, runtimeObjects } from '../support/dependency-objects';

/** The TypeScript files under `dir`, with their text. */
function sources(dir: string): { file: string; text: string }[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => ({ file: join(dir, name), text: readFileSync(join(dir, name), 'utf8') }));
}

/** The module specifiers a file imports (static and dynamic). */
function importsOf(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)'([^']+)'/g)].map((match) => match[1]!);
}

/** `file → specifier` for every import of `dirs` that starts with one of `prefixes`. */
function importsFrom(dirs: string[], prefixes: string[]): string[] {
  return dirs.flatMap(sources).flatMap(({ file, text }) =>
    importsOf(text).filter((spec) => prefixes.some((prefix) => spec.startsWith(prefix))).map((spec) => `${file} → ${spec}`));
}

const README = readFileSync('README.md', 'utf8');

/** The text of the README's fenced block after `<!-- marker ...`. */
function readmeBlock(marker: string): string {
  const start = README.indexOf(`<!-- ${marker}`);
  const block = start < 0 ? undefined : /```text\n([\s\S]*?)```/.exec(README.slice(start))?.[1];
  if (!block) throw new Error(`README.md has no <!-- ${marker} --> block`);
  return block;
}

/**
 * The layers of shared/, lowest first, as the README's architecture picture draws them (`layer N
 * <paths> <what they are>`, highest first): a file may import its own layer and the layers below it,
 * never one above. The picture is the rule, so it cannot drift from the code.
 */
const LAYERS: readonly (readonly string[])[] = readmeBlock('layers').trim().split('\n').map((line) => {
  const [, number, rest] = /^layer (\d+) +(.*)$/.exec(line) ?? [];
  if (!number) throw new Error(`Not a layer of the README's picture: ${line}`);
  const paths = rest!.split(/\s+/);
  return { number: Number(number), paths: paths.slice(0, paths.findIndex((word) => !word.startsWith('shared/'))) };
}).sort((a, b) => a.number - b.number).map(({ paths }, index, layers) => {
  if (layers[index]!.number !== index + 1) throw new Error('The README\'s layers are not numbered 1, 2, 3… without a gap');
  return paths;
});

/** The layer of a file of shared/ (its index in LAYERS) by the longest entry that names it, or undefined when none does. */
function layerOf(file: string): number | undefined {
  let found: { layer: number; length: number } | undefined;
  LAYERS.forEach((layer, index) => {
    for (const prefix of layer) {
      const names = file === prefix || (prefix.endsWith('/') && file.startsWith(prefix));
      if (names && prefix.length > (found?.length ?? -1)) found = { layer: index, length: prefix.length };
    }
  });
  return found?.layer;
}

/** The file an import of `file` names, relative to the repository (`#shared/a/b` → `shared/a/b.ts`). */
function importedFile(file: string, specifier: string): string | undefined {
  if (specifier.startsWith('#shared/')) return `shared/${specifier.slice('#shared/'.length)}.ts`;
  if (specifier.startsWith('.')) return normalize(join(dirname(file), specifier));
  return undefined;
}

/** Every file of the repository that `entry` imports, directly or not (static and dynamic imports of #shared/ and relative paths). */
function reachableFrom(entry: string): Set<string> {
  const seen = new Set<string>();
  const next = [entry];
  while (next.length > 0) {
    const file = next.pop()!;
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
      const target = importedFile(file, specifier);
      if (target) next.push(target.endsWith('.ts') ? target : `${target}.ts`);
    }
  }
  return seen;
}

/**
 * The start of every string literal and template literal of a TypeScript source: a string's whole
 * text, a template's text up to its first substitution. Comments and regular expressions are
 * skipped (a `/` after a value is a division; anywhere else it starts a regular expression).
 */
function literalStarts(source: string): string[] {
  const found: string[] = [];
  const substitutions: number[] = []; // the brace depth each open `${` of a template closes at
  let depth = 0;
  let i = 0;
  let previous = ''; // the last token of code before `i`: a punctuator, or a word
  /** Reads template text from `i` to its end or its next substitution. */
  const template = (): string => {
    let text = '';
    while (i < source.length) {
      const c = source[i]!;
      if (c === '\\') {
        text += source.slice(i, i + 2);
        i += 2;
      } else if (c === '`') {
        i++;
        return text;
      } else if (c === '$' && source[i + 1] === '{') {
        i += 2;
        substitutions.push(depth);
        return text;
      } else {
        text += c;
        i++;
      }
    }
    return text;
  };
  const valueEnds = (token: string) => /[\w$)\]]$/.test(token)
    && !['return', 'typeof', 'case', 'in', 'of', 'void', 'throw', 'delete', 'instanceof', 'yield', 'await', 'else', 'do'].includes(token);
  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      i = end < 0 ? source.length : end;
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      i = end < 0 ? source.length : end + 2;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1;
      found.push(source.slice(i + 1, j));
      i = j + 1;
      previous = c;
    } else if (c === '`') {
      i++;
      found.push(template());
      previous = '`';
    } else if (c === '}' && substitutions.at(-1) === depth) {
      // The end of a template's substitution: the template goes on (its text here starts nothing).
      substitutions.pop();
      i++;
      template();
      previous = '`';
    } else if (c === '/' && !valueEnds(previous)) {
      // A regular expression: up to its closing slash outside a character class, then its flags.
      let j = i + 1;
      let inClass = false;
      while (j < source.length && (inClass || source[j] !== '/')) {
        if (source[j] === '\\') j++;
        else if (source[j] === '[') inClass = true;
        else if (source[j] === ']') inClass = false;
        j++;
      }
      i = j + 1;
      while (i < source.length && /\w/.test(source[i]!)) i++;
      previous = ')';
    } else if (/[\w$]/.test(c)) {
      WORD.lastIndex = i;
      previous = WORD.exec(source)![0];
      i += previous.length;
    } else {
      if (c === '{') depth++;
      if (c === '}') depth--;
      if (!/\s/.test(c)) previous = c;
      i++;
    }
  }
  return found;
}

const WORD = /[\w$]+/y;

/** The modules directly in functions/: the registry of the functions and the data their declarations use. No handler is there. */
const FUNCTION_MODULES = ['registry.ts', 'declaration-checks.ts', 'needs.ts'];
const DECLARATION = /\.route\.ts$/;

/**
 * What breaks "one declaration per function, beside its handler" among `files` (paths under
 * functions/, posix): a module other than FUNCTION_MODULES outside an area folder, a handler without
 * its `<name>.route.ts`, a declaration without its `<name>.ts`.
 */
function unpairedFunctionFiles(files: readonly string[]): string[] {
  const present = new Set(files);
  return files.filter((file) => file.endsWith('.ts')).flatMap((file) => {
    if (!file.includes('/')) return FUNCTION_MODULES.includes(file) ? [] : [`${file}: not in an area folder (functions/<area>/)`];
    const sibling = DECLARATION.test(file) ? file.replace(DECLARATION, '.ts') : file.replace(/\.ts$/, '.route.ts');
    if (present.has(sibling)) return [];
    return [DECLARATION.test(file) ? `${file}: declares a function with no handler ${sibling}` : `${file}: a handler without its declaration ${sibling}`];
  });
}

/** Imports that a declaration may not make: importing one must construct no client and load no handler. */
const NOT_IN_A_DECLARATION = [/^@aws-sdk\//, /^#shared\/aws\//, /runtime$/, /^\.\.?\//, /^#functions\/(?!needs$)/];

/**
 * The functions that write a way to sign in without a session, each proven otherwise: the page
 * middleware's recent sign-in has no session to ask of them.
 */
const PROVEN_WITHOUT_A_SESSION: Readonly<Record<string, string>> = {
  'post-new-password': 'the e-mailed reset link proves the owner, and the reset ends every session',
  'post-confirm-email': 'the e-mailed link confirms the address it was sent to',
};

/** What breaks "a page that writes a way to sign in asks for a recent sign-in" among `functions`, with their handler's text. */
function credentialWritesUnguarded(functions: readonly { name: string; needs: FunctionNeeds; recentSignIn: boolean; handler: string }[]): string[] {
  return functions.flatMap(({ name, needs, recentSignIn, handler }) => {
    const writes = (needs.table ?? []).some((need) => need.credential === true);
    const signedIn = /session: 'required'/.test(handler);
    if (recentSignIn && !signedIn) return [`${name}: asks for a recent sign-in, but its page takes no session ('required')`];
    if (!writes || recentSignIn) return [];
    if (PROVEN_WITHOUT_A_SESSION[name] && !signedIn) return [];
    return [`${name}: writes a credential (an operation marked \`credential\`) without asking for a recent sign-in (recentSignIn: true)`];
  });
}

/** An item-key prefix: an upper-case word and `#` (`USER#`, `FAMILY#`, `SIGNING#KEYS`…). */
const ITEM_KEY_PREFIX = /^[A-Z][A-Z0-9_]*#/;

describe('layout', () => {
  it('keeps what is deployed free of the stack and of the local runtime', () => {
    expect(importsFrom(['functions', 'shared'], ['#infra/', '#local/'])).toEqual([]);
    expect(importsFrom(['infra'], ['#local/'])).toEqual([]);
  });

  it('keeps HTTP out of the domain', () => {
    expect(importsFrom(['shared/domain'], ['#shared/errors', '#shared/http/'])).toEqual([]);
  });

  it('builds and parses item keys only in shared/data/item-keys.ts', () => {
    // The scanner itself: literals in code count, comments and regular expressions do not.
    expect(literalStarts("a('X#' /* 'Y#' */ + `Z#${b({ c: `V#` })}W#` + /'Q#/g.source) / 2 // 'R#'\n'S#'"))
      .toEqual(['X#', 'Z#', 'V#', 'S#']);
    const inline = ['shared', 'functions', 'local', 'bench', 'infra'].flatMap(sources)
      .filter(({ file }) => file !== join('shared', 'data', 'item-keys.ts'))
      .flatMap(({ file, text }) => literalStarts(text).filter((literal) => ITEM_KEY_PREFIX.test(literal)).map((literal) => `${file}: ${literal}`));
    expect(inline).toEqual([]);
  });

  it('makes every import inside shared/ point to the same layer or a lower one', () => {
    const files = sources('shared');
    expect(files.filter(({ file }) => layerOf(file) === undefined).map(({ file }) => file)).toEqual([]);
    const upward = files.flatMap(({ file, text }) => importsOf(text).flatMap((specifier) => {
      const target = importedFile(file, specifier);
      const to = target === undefined ? undefined : layerOf(target);
      return to !== undefined && to > layerOf(file)! ? [`${file} → ${specifier}`] : [];
    }));
    expect(upward).toEqual([]);
  });

  it('declares each function once, beside its handler, and gives every declaration a handler', () => {
    const files = readdirSync('functions', { recursive: true, encoding: 'utf8' }).map((name) => name.split('\\').join('/'));
    expect(files.filter((file) => DECLARATION.test(file)).length).toBeGreaterThan(40);
    expect(unpairedFunctionFiles(files)).toEqual([]);
    // The rule can fail: a handler without a declaration, a declaration without a handler, a helper outside an area.
    expect(unpairedFunctionFiles(['needs.ts', 'helpers.ts', 'devices/delete-device.ts', 'devices/get-device.ts', 'devices/get-device.route.ts', 'ops/purge.route.ts']))
      .toEqual([
        'helpers.ts: not in an area folder (functions/<area>/)',
        'devices/delete-device.ts: a handler without its declaration devices/delete-device.route.ts',
        'ops/purge.route.ts: declares a function with no handler ops/purge.ts',
      ]);
  });

  it('keeps the declarations data: no AWS client, no runtime, no handler among their imports', () => {
    const declarations = sources('functions').filter(({ file }) => DECLARATION.test(file));
    const forbidden = declarations.flatMap(({ file, text }) =>
      importsOf(text).filter((spec) => NOT_IN_A_DECLARATION.some((rule) => rule.test(spec))).map((spec) => `${file} → ${spec}`));
    expect(forbidden).toEqual([]);
  });

  it('draws layers that name real files, and a request\'s way through files its handler reaches', () => {
    const exists = (path: string) => existsSync(path.endsWith('/') ? path : path);
    expect(LAYERS.flat().filter((path) => !exists(path))).toEqual([]);
    const steps = [...readmeBlock('request-way').matchAll(/^ +((?:functions|shared)\/\S+\.ts)/gm)].map((m) => m[1]!);
    expect(steps.length).toBeGreaterThan(5);
    expect(steps.filter((path) => !existsSync(path))).toEqual([]);
    const handler = steps.find((path) => path.startsWith('functions/') && !path.endsWith('.route.ts'))!;
    const reached = reachableFrom(handler);
    expect(steps.filter((path) => path.startsWith('shared/') && !reached.has(path))).toEqual([]);
  });

  it('asks for a recent sign-in on every page whose function adds, removes or replaces a way to sign in', async () => {
    const { ENDPOINTS } = await import('#functions/registry');
    const functions = ENDPOINTS.map((endpoint) => ({ ...endpoint, handler: readFileSync(endpoint.entry, 'utf8') }));
    const writers = functions.filter(({ needs }) => (needs.table ?? []).some((need) => need.credential === true)).map(({ name }) => name);
    expect(writers).toEqual(expect.arrayContaining(['post-add-passkey', 'post-remove-passkey', 'post-confirm-totp', 'post-remove-totp', 'post-new-password']));
    expect(credentialWritesUnguarded(functions)).toEqual([]);
    // Each exemption is a function that writes one, and without a session.
    expect(Object.keys(PROVEN_WITHOUT_A_SESSION).filter((name) => !writers.includes(name))).toEqual([]);
    // The rule can fail: a page that writes a passkey without asking, and one that asks without a session.
    const passkeyWrite = { table: [{ actions: ['PutItem'], credential: true }] } as const satisfies FunctionNeeds;
    expect(credentialWritesUnguarded([
      { name: 'post-add-key', needs: passkeyWrite, recentSignIn: false, handler: "pageHandler({ session: 'required' })" },
      { name: 'post-new-password', needs: passkeyWrite, recentSignIn: false, handler: "pageHandler({ session: 'required' })" },
      { name: 'get-open', needs: {}, recentSignIn: true, handler: "pageHandler({ session: 'optional' })" },
      { name: 'post-new-password', needs: passkeyWrite, recentSignIn: false, handler: 'pageHandler({ form: true })' },
    ])).toEqual([
      'post-add-key: writes a credential (an operation marked `credential`) without asking for a recent sign-in (recentSignIn: true)',
      'post-new-password: writes a credential (an operation marked `credential`) without asking for a recent sign-in (recentSignIn: true)',
      "get-open: asks for a recent sign-in, but its page takes no session ('required')",
    ]);
  });

  it('lets no handler build a dependency object: a service is bound to its repositories in shared/runtime.ts', () => {
    // The repositories, the batch reader and the queue (shared/runtime-repos.ts); a bound service (`tokens`) may be handed on.
    const objects = runtimeObjects(readFileSync('shared/runtime-repos.ts', 'utf8'));
    expect([...objects]).toEqual(expect.arrayContaining(['batch', 'users', 'throttle', 'grants', 'webhooks']));
    const handlers = sources('functions').filter(({ file }) => !DECLARATION.test(file));
    expect(handlers.flatMap(({ file, text }) => dependencyObjects(text, objects).map((object) => `${file}: ${object}`))).toEqual([]);
    // The rule can fail: a handler that hands a service its repositories.
    const handBuilt = "import { batch, users as people } from '#shared/runtime';\nawait attemptLogin({ batch, users: people }, { email });";
    expect(dependencyObjects(handBuilt, objects)).toEqual(['{ batch, users: people }']);
    // Or one that hands a service one repository as an argument; a repository's own method is called, not handed.
    const handedOver = "import { grants, users } from '#shared/runtime';\nreturn redirect(await issueCode(grants, request, issuer(), consent), users.signInProfileRead(id));";
    expect(dependencyObjects(handedOver, objects)).toEqual(['issueCode(grants, request, issuer(), consent)']);
  });

  it('reads the environment only in shared/config.ts', () => {
    const readers = ['functions', 'shared'].flatMap(sources)
      .filter(({ file, text }) => file !== join('shared', 'config.ts') && /\bprocess\.env\b/.test(text))
      .map(({ file }) => file);
    expect(readers).toEqual([]);
  });

  it('loads every module of shared/ without the service\'s settings: a setting is read where it is used (shared/runtime.ts)', async () => {
    for (const name of [...Object.values(ENV), ...Object.values(MAIL_ENV), ...Object.values(WEBHOOK_ENV)]) vi.stubEnv(name, undefined);
    try {
      const failed: string[] = [];
      for (const { file } of sources('shared')) {
        await import(`../../${file.split('\\').join('/')}`).catch((error: unknown) => failed.push(`${file}: ${(error as Error).message}`));
      }
      expect(failed).toEqual([]);
    } finally {
      vi.unstubAllEnvs();
    }
  }, 120_000);

  // A file that grew past what a reader takes in at once is split by job (a repository's operations
  // into parts it composes, a type's sample kit apart). What runs in AWS, and what declares it, is held
  // to it; local/ (the example application is one page of HTML and script) and the tests are not.
  it('keeps every file of shared/, functions/ and infra/ at 250 lines or fewer', () => {
    const long = ['shared', 'functions', 'infra'].flatMap(sources)
      .map(({ file, text }) => ({ file, lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) }))
      .filter(({ lines }) => lines > 250).map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });

  it('pages a Query one way, and sets up a test\'s data one way', () => {
    // Only queryAll (shared/data/dynamodb.ts) carries a Query's start key from page to page
    // (shared/data/commands.ts only says the member holds attribute values).
    const pagingAllowed = [join('shared', 'data', 'dynamodb.ts'), join('shared', 'data', 'commands.ts')];
    const paging = sources('shared').filter(({ file, text }) => !pagingAllowed.includes(file) && /\bExclusiveStartKey\b/.test(text));
    expect(paging.map(({ file }) => file)).toEqual([]);
    // Users and applications come from test/support/factories.ts; a test file's table and its repositories from useRepoTable (test/support/repos.ts).
    const tests = sources('test').filter(({ file }) => file.endsWith('.test.ts'));
    expect(tests.filter(({ text }) => /\b(?:function|const) (?:makeUser|makeClient)\b/.test(text)).map(({ file }) => file)).toEqual([]);
    const wiring = /= await freshTable\(\)\);\s*\n\s*\w+ = create\w+\(\{ doc, table \}\)/;
    expect(tests.filter(({ text }) => wiring.test(text)).map(({ file }) => file)).toEqual([]);
  });
});

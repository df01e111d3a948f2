import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

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

/**
 * The order of the layers of shared/, lowest first: a file may import its own layer and the layers
 * before it, never one after it. Every file of shared/ belongs to exactly one (a prefix of its path).
 */
const LAYERS: readonly (readonly string[])[] = [
  // Types and rules: what a device, a user, a grant, a webhook… is. Nothing of the service.
  ['shared/domain/'],
  // What every layer may use: configuration (and the names infra/ and local/ share), the route
  // table, logs and metrics, the errors answered to clients, random secrets and their hashes, the
  // AWS client settings, and the files functions carry besides their code.
  ['shared/config.ts', 'shared/routes.ts', 'shared/log.ts', 'shared/metrics.ts', 'shared/errors.ts', 'shared/secrets.ts', 'shared/aws/', 'shared/assets.ts'],
  // Storage: the repositories, the item keys (keys.ts), the table's schema and limits.
  ['shared/data/'],
  // The ways out: HTTP (wrappers, responses, forms, cookies), the HTML pages (views), e-mail, images.
  ['shared/http/', 'shared/views/', 'shared/email/', 'shared/images/'],
  // The token signers and the signing-key rotation.
  ['shared/keys/'],
  // What the handlers call: the OAuth grants and endpoints, accounts (sign-up, sign-in), the developer
  // console, webhooks, the API's documents. Each service is given what it uses; none builds a client.
  ['shared/oauth/', 'shared/accounts/', 'shared/console/', 'shared/webhooks/', 'shared/docs/'],
  // The composition root: builds every client, repository and service above from the environment.
  ['shared/runtime.ts'],
  // The pages' own reads (the session, the webhook card and forms), which take the root's
  // repositories as the handlers do: the root cannot build them, nothing below may import them.
  ['shared/accounts/session.ts', 'shared/console/webhook-console.ts'],
];

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

  it('builds and parses item keys only in shared/data/keys.ts', () => {
    // The scanner itself: literals in code count, comments and regular expressions do not.
    expect(literalStarts("a('X#' /* 'Y#' */ + `Z#${b({ c: `V#` })}W#` + /'Q#/g.source) / 2 // 'R#'\n'S#'"))
      .toEqual(['X#', 'Z#', 'V#', 'S#']);
    const inline = ['shared', 'functions', 'local', 'bench', 'infra'].flatMap(sources)
      .filter(({ file }) => file !== join('shared', 'data', 'keys.ts'))
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

  it('reads the environment only in shared/config.ts', () => {
    const readers = ['functions', 'shared'].flatMap(sources)
      .filter(({ file, text }) => file !== join('shared', 'config.ts') && /\bprocess\.env\b/.test(text))
      .map(({ file }) => file);
    expect(readers).toEqual([]);
  });
});

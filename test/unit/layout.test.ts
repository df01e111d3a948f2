import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

describe('layout', () => {
  it('keeps what is deployed free of the stack and of the local runtime', () => {
    expect(importsFrom(['functions', 'shared'], ['#infra/', '#local/'])).toEqual([]);
    expect(importsFrom(['infra'], ['#local/'])).toEqual([]);
  });

  it('keeps HTTP out of the domain', () => {
    expect(importsFrom(['shared/domain'], ['#shared/errors', '#shared/http/'])).toEqual([]);
  });

  it('reads the environment only in shared/config.ts', () => {
    const readers = ['functions', 'shared'].flatMap(sources)
      .filter(({ file, text }) => file !== join('shared', 'config.ts') && /\bprocess\.env\b/.test(text))
      .map(({ file }) => file);
    expect(readers).toEqual([]);
  });
});

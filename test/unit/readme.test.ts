import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS, ROUTES } from '#functions/registry';

describe('README', () => {
  const readme = readFileSync('README.md', 'utf8');

  // The declarations (functions/<area>/<name>.route.ts) are the complete list; the architecture guide's
  // table is an overview a new endpoint need not join, but every route and function it names must exist.
  it('names only routes and functions that are declared', () => {
    const architecture = readFileSync('docs/architecture.md', 'utf8');
    const section = architecture.slice(architecture.indexOf('## Routes'), architecture.indexOf('\n## ', architecture.indexOf('## Routes')));
    const declared = new Set(ROUTES.map((r) => `${r.method} ${r.path}`));
    const named = [...section.matchAll(/`((?:GET|POST|PUT|DELETE|PATCH) \/[^`]*)`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(30);
    expect(named.filter((key) => !declared.has(key))).toEqual([]);
    const functions = [...section.matchAll(/^\|[^|]*\|[^|]*\| ([a-z0-9, -]+) \|/gm)].flatMap((m) => m[1]!.split(', ').map((name) => name.trim()));
    expect(functions.length).toBeGreaterThan(30);
    expect(functions.filter((name) => name !== 'same' && !Object.hasOwn(FUNCTIONS, name))).toEqual([]);
  });

  it('says the deploy needs mailFrom, which CI passes to cdk synth', () => {
    expect(readme).toContain('npx cdk deploy -c mailFrom=');
    expect(readme).toContain('`mailFrom` is required and has no default');
    const synth = readFileSync('.ci/run', 'utf8').split('\n').filter((line) => /^\s*npx cdk synth\b/.test(line));
    expect(synth).toHaveLength(1);
    expect(synth[0]).toMatch(/ -c mailFrom=\S+@\S+\.invalid\b/);
  });

  it('gives the quick start commands', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
  });
});

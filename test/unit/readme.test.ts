import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS, ROUTES } from '#functions/endpoints';

describe('README', () => {
  const readme = readFileSync('README.md', 'utf8');

  it('lists every route of the route table with its function', () => {
    for (const route of ROUTES.filter((r) => !r.path.startsWith('/api/'))) {
      expect(readme, route.path).toContain(`\`${route.method} ${route.path}\``);
    }
    for (const name of Object.keys(FUNCTIONS)) {
      if (name !== 'http-fallback') expect(readme, name).toMatch(new RegExp(`\\b${name}\\b`));
    }
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

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS, ROUTES } from '#infra/routes';

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

  it('gives the quick start commands', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
  });
});

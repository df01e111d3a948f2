import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_ENV } from '#shared/config';
import { functionDefine } from '#infra/bundling';
import { stackEsbuildOptions } from '../../bench/bundle.ts';

const ROOT = resolve(import.meta.dirname, '../..');

// Whether a function asks for a recent sign-in is a constant of its bundle (functionDefine, as the
// stack and the benchmark bundle): the page middleware's question is answered without the local
// list of route keys, which a deployed function does not have.
describe('the recent sign-in of a bundled function', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dus-recent-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([true, false])('is its own constant (%s), folded by the minifier, with no list of route keys', async (recent) => {
    // Prepare
    const outfile = join(dir, `recent-${recent}.mjs`);
    const settings = stackEsbuildOptions();
    await build({
      ...settings, define: { ...settings.define, ...functionDefine(recent) }, outfile,
      stdin: { contents: "export { asksRecentSignIn } from '#shared/config';", resolveDir: ROOT, loader: 'ts' },
    });

    // Act: a fresh module, where no registry provided the list, as in Lambda.
    const { asksRecentSignIn } = (await import(pathToFileURL(outfile).href)) as typeof import('#shared/config');

    // Assess
    expect(asksRecentSignIn('POST /account/security/passkeys')).toBe(recent);
    expect(asksRecentSignIn('GET /account')).toBe(recent);
    expect(readFileSync(outfile, 'utf8')).not.toContain('/account/security/passkeys');
  });

  it('refuses to answer without its constant or the registry\'s list, rather than skip the question', async () => {
    const outfile = join(dir, 'recent-missing.mjs');
    await build({ ...stackEsbuildOptions(), outfile, stdin: { contents: "export { asksRecentSignIn } from '#shared/config';", resolveDir: ROOT, loader: 'ts' } });
    const { asksRecentSignIn } = (await import(pathToFileURL(outfile).href)) as typeof import('#shared/config');
    expect(() => asksRecentSignIn('POST /account/security/passkeys')).toThrow(`No ${BUNDLE_ENV.recentSignIn}`);
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WEBAUTHN_BROWSER_FILE } from '#shared/assets';
import { PASSKEY_PAGE_CODE } from '#shared/views/passkey-ui';

let cached: string | undefined;

/**
 * The script of GET /assets/passkeys.js: @simplewebauthn/browser's bundle (WEBAUTHN_BROWSER_FILE,
 * read once from node_modules: locally the repository's, in Lambda the copy the stack puts into the
 * function's package, `assets` of its declaration), then the pages' code (PASSKEY_PAGE_CODE). The
 * package's exports map hides the file from require.resolve, so it is found by its path, in the
 * nearest node_modules above this module.
 */
export function passkeyScript(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'node_modules', WEBAUTHN_BROWSER_FILE);
    if (existsSync(file)) {
      cached = `${readFileSync(file, 'utf8')}\n${PASSKEY_PAGE_CODE}`;
      return cached;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${WEBAUTHN_BROWSER_FILE} is in no node_modules above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

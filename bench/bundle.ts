import { mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { BUNDLING, ESBUILD_SETTINGS, functionDefine, lazyModuleFile } from '#infra/bundling';
import { endpointOf, isFunctionName } from '#functions/registry';
import { PASSWORD_STRENGTH_ENTRY } from '#shared/domain/password-policy';
import { PASSKEY_VERIFY_ENTRY } from '#shared/accounts/passkeys';

export const ROOT = resolve(import.meta.dirname, '..');
export const OUT_DIR = join(ROOT, 'bench', '.out');
export const BASELINE_NAME = 'baseline';
export const BASELINE_ENTRY = 'bench/baseline/handler.ts';
/** The floor bundle: the baseline's client, making the requests its event lists (see floors.ts). */
export const FLOOR_NAME = 'floor';
export const FLOOR_ENTRY = 'bench/baseline/floor.ts';
/**
 * The floor's `zxcvbn` and `passkeyCheck` steps run the same estimator and WebAuthn files the
 * functions load on first use; its `qrCode` step, the QR encoder's module, which the set-up pages
 * bundle (the floor loads it only for their floors).
 */
export const FLOOR_LAZY_MODULES = [PASSWORD_STRENGTH_ENTRY, PASSKEY_VERIFY_ENTRY, 'shared/views/qr-code.ts'];
/** The floor with the SQS client library in its bundle: for floors with the `queueClient` step. */
export const FLOOR_QUEUE_NAME = 'floor-queue';
export const FLOOR_QUEUE_ENTRY = 'bench/baseline/floor-queue.ts';
/** The floor with the KMS client library in its bundle: for floors with the `kmsClient` step. */
export const FLOOR_KMS_NAME = 'floor-kms';
export const FLOOR_KMS_ENTRY = 'bench/baseline/floor-kms.ts';

/**
 * The esbuild options the CDK stack uses, for esbuild's JavaScript API. NodejsFunction runs the
 * esbuild CLI from the project root with `--bundle`, these settings and `--external:` per
 * BUNDLING.externalModules (no source map, no metafile); the only translations needed are the banner
 * (`--banner:js=`), which the API takes as `{ js }`, and the built-in shims (`--alias:` per entry
 * of BUNDLING.esbuildArgs, the API's `alias`).
 */
export function stackEsbuildOptions(): BuildOptions {
  const { banner, mainFields, alias, ...settings } = ESBUILD_SETTINGS;
  return {
    ...settings,
    mainFields: [...mainFields],
    banner: { js: banner },
    alias: { ...alias },
    external: [...(BUNDLING.externalModules ?? [])],
    absWorkingDir: ROOT,
    logLevel: 'error',
  };
}

export interface BundleResult {
  name: string;
  entry: string;
  file: string;
  bytes: number;
  /** Modules bundled on their own beside it, imported on first use (FunctionDef.lazyModules): not loaded at cold start. */
  lazy: { entry: string; file: string; bytes: number }[];
}

/**
 * Bundles every entry (name → entry file, relative to the root) into bench/.out/<name>/index.mjs.
 * One esbuild run with several entry points and no code splitting writes the same files as one run
 * per entry (each output is a self-contained bundle), and parses shared dependencies only once.
 */
export async function bundleAll(
  entries: Record<string, string>,
  options: { withoutShims?: boolean; lazyModules?: Record<string, readonly string[]> } = {},
): Promise<Map<string, BundleResult>> {
  mkdirSync(OUT_DIR, { recursive: true });
  const { alias, ...stack } = stackEsbuildOptions();
  // As the stack does, each bundle says whether its function asks for a recent sign-in (functionDefine): one run per answer.
  const asksRecent = (name: string) => isFunctionName(name) && endpointOf(name).recentSignIn;
  for (const recent of [false, true]) {
    const group = Object.entries(entries).filter(([name]) => asksRecent(name) === recent);
    if (group.length === 0) continue;
    await build({
      ...stack,
      define: { ...stack.define, ...functionDefine(recent) },
      // The old path, measured for comparison only (bench/cold-start-old-path.ts): Node's ESM facades.
      ...(options.withoutShims ? {} : { alias }),
      entryPoints: group.map(([name, entry]) => ({ in: resolve(ROOT, entry), out: `${name}/index` })),
      outdir: OUT_DIR,
      outExtension: { '.js': '.mjs' },
    });
  }
  // Each lazily imported module beside the bundles that import it, as the stack's afterBundling hook does.
  const lazy = Object.entries(options.lazyModules ?? {}).flatMap(([name, modules]) => (name in entries ? modules.map((entry) => ({ name, entry })) : []));
  if (lazy.length > 0) {
    await build({
      ...stack,
      ...(options.withoutShims ? {} : { alias }),
      entryPoints: lazy.map(({ name, entry }) => ({ in: resolve(ROOT, entry), out: `${name}/${lazyModuleFile(entry).replace(/\.mjs$/, '')}` })),
      outdir: OUT_DIR,
      outExtension: { '.js': '.mjs' },
    });
  }
  return new Map(Object.entries(entries).map(([name, entry]) => {
    const file = join(OUT_DIR, name, 'index.mjs');
    const lazyFiles = lazy.filter((l) => l.name === name).map((l) => {
      const lazyFile = join(OUT_DIR, name, lazyModuleFile(l.entry));
      return { entry: l.entry, file: lazyFile, bytes: statSync(lazyFile).size };
    });
    return [name, { name, entry, file, bytes: statSync(file).size, lazy: lazyFiles }];
  }));
}

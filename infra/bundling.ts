import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { endpointTableJson } from '#functions/registry';
import { BUNDLE_ENV } from '#shared/config';

/**
 * Node built-ins that every bundle takes through a CommonJS shim (infra/shims/) instead of their
 * ESM facade. The AWS SDK's ESM build imports `node:http` and `node:https` (its request handler);
 * importing `node:http` as an ES module reads every export, which evaluates its lazy getters
 * (WebSocket and friends) and so loads undici: 27–57 ms on the benchmark's machine against
 * 3–8 ms for the CommonJS object (bench/RESULTS.md, "HTTP shim"). Paths are relative to the
 * project root, where both CDK and the benchmark run esbuild.
 */
export const BUILTIN_SHIMS = {
  http: './infra/shims/http.cjs',
  'node:http': './infra/shims/http.cjs',
  https: './infra/shims/https.cjs',
  'node:https': './infra/shims/https.cjs',
} as const;

/**
 * What esbuild's `define` compiles into every bundle (shared/config.ts BUNDLE_ENV): the endpoint
 * table, which the 405/404 fallback and the OpenAPI function answer from, as a string literal in
 * place of `process.env.ENDPOINT_TABLE`. Made by functions/registry.ts from the declarations, as
 * the local processes get it, so a bundle answers from the same table as the stack that deploys it.
 * A bundle that does not read it comes out the same with or without it.
 */
export const BUNDLE_DEFINE: Readonly<Record<string, string>> = {
  [`process.env.${BUNDLE_ENV.endpointTable}`]: JSON.stringify(endpointTableJson()),
};

/**
 * What esbuild's `define` compiles into one function's bundle besides BUNDLE_DEFINE: whether it asks
 * for a recent sign-in (FunctionDef.recentSignIn), which the page middleware reads
 * (shared/config.ts asksRecentSignIn) and the minifier folds to a constant.
 */
export const functionDefine = (recentSignIn: boolean): Record<string, string> => ({
  [`process.env.${BUNDLE_ENV.recentSignIn}`]: JSON.stringify(recentSignIn ? 'yes' : 'no'),
});

/**
 * The esbuild settings of every function. The benchmark bundles with exactly these, so what it
 * measures is what Lambda loads.
 */
export const ESBUILD_SETTINGS = {
  platform: 'node',
  target: 'node24',
  format: 'esm',
  bundle: true,
  minify: true,
  mainFields: ['module', 'main'],
  // Some CommonJS dependencies call require() for Node built-ins; give ESM bundles one.
  banner: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);",
  alias: BUILTIN_SHIMS,
  define: BUNDLE_DEFINE,
} as const;

export const BUNDLING: BundlingOptions = {
  format: OutputFormat.ESM,
  target: ESBUILD_SETTINGS.target,
  minify: ESBUILD_SETTINGS.minify,
  mainFields: [...ESBUILD_SETTINGS.mainFields],
  banner: ESBUILD_SETTINGS.banner,
  define: { ...ESBUILD_SETTINGS.define },
  // NodejsFunction has no alias option; its esbuild CLI takes one `--alias:<module>=<path>` each.
  esbuildArgs: { '--alias': Object.entries(ESBUILD_SETTINGS.alias).map(([module, path]) => `${module}=${path}`) },
  // Bundle the AWS SDK too: a pinned, tree-shaken client loads faster than the runtime's copy.
  externalModules: [],
  forceDockerBundling: false,
};

/** The file a lazily imported module (FunctionDef.lazyModules) becomes beside the bundle: `password-strength.mjs`. */
export const lazyModuleFile = (entry: string) => `${entry.split('/').pop()!.replace(/\.[cm]?[jt]s$/, '')}.mjs`;

/**
 * The esbuild CLI arguments (after `--bundle <entry>`) that bundle a lazily imported module as
 * NodejsFunction bundles the handler: the same settings, one self-contained ESM file.
 */
export function lazyModuleEsbuildArgs(outfile: string): string[] {
  const s = ESBUILD_SETTINGS;
  return [
    `--platform=${s.platform}`, `--target=${s.target}`, `--format=${s.format}`, ...(s.minify ? ['--minify'] : []),
    `--main-fields=${s.mainFields.join(',')}`, `--banner:js=${s.banner}`,
    ...Object.entries(s.alias).map(([module, path]) => `--alias:${module}=${path}`),
    ...Object.entries(s.define).map(([name, value]) => `--define:${name}=${value}`),
    `--outfile=${outfile}`,
  ];
}

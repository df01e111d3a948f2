import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';

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
} as const;

export const BUNDLING: BundlingOptions = {
  format: OutputFormat.ESM,
  target: ESBUILD_SETTINGS.target,
  minify: ESBUILD_SETTINGS.minify,
  mainFields: [...ESBUILD_SETTINGS.mainFields],
  banner: ESBUILD_SETTINGS.banner,
  // Bundle the AWS SDK too: a pinned, tree-shaken client loads faster than the runtime's copy.
  externalModules: [],
  forceDockerBundling: false,
};

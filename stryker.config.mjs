// @ts-check
import securityModules from './test/mutation/security-modules.json' with { type: 'json' };

/**
 * StrykerJS configuration of `npm run mutate` (test/mutation/run.ts runs Stryker with it, then checks
 * the per-module floors of test/mutation/check-scores.ts on the JSON report).
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  // Each mutant runs only the tests that executed its code in the initial run.
  coverageAnalysis: 'perTest',
  // The modules that decide who gets a token or a device (each held to 90 %). The whole of shared/
  // (`--mutate 'shared/**/*.ts'`) is about three times as many mutants: well over the hour a run
  // of `npm run mutate` is meant to take on two workers.
  mutate: securityModules,
  concurrency: 2,
  // The initial run is every unit and integration test on one worker.
  dryRunTimeoutMinutes: 30,
  // A shared, busy machine: a slow test is not an infinite loop.
  timeoutMS: 20_000,
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  // Stryker would rewrite tsconfig.json's `extends` and `references` for the sandbox with TypeScript's
  // JavaScript API, which TypeScript 7 no longer has; ours has neither, so nothing names a tsconfig.
  tsconfigFile: '',
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  // The per-module floors (90 % for the modules that decide who gets a token or a device) are
  // checked by test/mutation/run.ts (check-scores.ts); `break` is Stryker's own floor for the overall score.
  thresholds: { high: 90, low: 80, break: 80 },
};

import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The vitest configuration of mutation runs (`npm run mutate`, stryker.config.mjs): the main suite
 * with its global setups (the run's temporary folder, DynamoDB Local), without the IAM proof. The
 * IAM test reads what the whole suite recorded, which a mutation run never is: Stryker runs only the
 * tests that cover each mutant.
 */
const suite = base.test?.projects?.find((project) => typeof project === 'object' && 'test' in project && project.test?.name === 'suite');
if (!suite || typeof suite !== 'object') throw new Error('vitest.config.ts has no project named suite');

export default defineConfig({
  test: {
    ...base.test,
    // Instrumented code runs slower, one test file at a time on a busy machine: a test that takes
    // 20 s in `npm test` (31 sign-ins in a row) must not fail the initial run on the clock.
    testTimeout: 120_000,
    projects: [suite],
  },
});

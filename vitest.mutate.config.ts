import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The vitest configuration of mutation runs (`npm run mutate`, stryker.config.mjs): the main suite
 * with its global setups (the run's temporary folder, DynamoDB Local), without the IAM proof. The
 * IAM test reads what the whole suite recorded, which a mutation run never is: Stryker runs only the
 * tests that cover each mutant.
 */
const suite = base.test?.projects?.find((project): project is TestProjectInlineConfiguration =>
  typeof project === 'object' && 'test' in project && project.test?.name === 'suite');
if (!suite) throw new Error('vitest.config.ts has no project named suite');

/**
 * Tests whose code under test runs in a child process (the command-line tools, `npm start`, the CDK
 * app of the template tests): Stryker activates a mutant and records coverage only in the test's own
 * process, so these can kill no mutant, and they assert on a child's output that the instrumented
 * sandbox changes.
 */
const CHILD_PROCESS_TESTS = ['test/e2e/start-ports.test.ts', 'test/e2e/cli-tools.test.ts', 'test/e2e/invoke.test.ts', 'test/infra/**'];
/** Tests of the source text (imports, `process.env`), which Stryker's instrumentation rewrites in the sandbox. */
const SOURCE_TEXT_TESTS = ['test/unit/layout.test.ts'];

export default defineConfig({
  test: {
    ...base.test,
    // Instrumented code runs slower, one test file at a time on a busy machine: a test that takes
    // 20 s in `npm test` (31 sign-ins in a row) must not fail the initial run on the clock.
    testTimeout: 120_000,
    projects: [{ ...suite, test: { ...suite.test, exclude: [...(suite.test?.exclude ?? []), ...CHILD_PROCESS_TESTS, ...SOURCE_TEXT_TESTS] } }],
  },
});

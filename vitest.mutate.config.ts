import { join } from 'node:path';
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

/** Tests of the source text (imports, `process.env`), which Stryker's instrumentation rewrites in the sandbox. */
const SOURCE_TEXT_TESTS = ['test/unit/layout.test.ts'];

/**
 * The tests that mutation runs use: unit and integration tests, in-process and quick. Each end-to-end
 * file starts a whole local service (tables, seed, both hosts) or a browser in its set-up, which a
 * mutation run repeats for every mutant the file covers: over seven of the security modules, about 5 s a mutant
 * (4 hours for 600 mutants on two workers, measured 2026-11-23), against well under a second here. So
 * a module's mutants must be killed by its own quick tests; the end-to-end tests prove the wiring.
 */
const MUTATION_TESTS = ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'];

export default defineConfig({
  test: {
    ...base.test,
    // Instrumented code runs slower, one test file at a time on a busy machine: a slow test (scrypt,
    // tens of concurrent transactions) must not fail the initial run on the clock.
    testTimeout: 120_000,
    // The run's temporary folder inside Stryker's sandbox (vitest runs there), which Stryker removes
    // after the run: a mutant that times out is killed before its afterAll, and Stryker ends the
    // vitest workers without the global teardown, so a folder in the system's /tmp would stay.
    env: { ...base.test?.env, TMPDIR: join(process.cwd(), '.tmp', `run-${process.pid}`) },
    projects: [{ ...suite, test: { ...suite.test, include: MUTATION_TESTS, exclude: [...(suite.test?.exclude ?? []), ...SOURCE_TEXT_TESTS] } }],
  },
});

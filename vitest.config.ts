import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

const IAM_TEST = 'test/infra/iam-grants.test.ts';
/**
 * The test processes' TMPDIR: every temporary file of the run goes here, and the run fails if any
 * is left after it (test/support/temp-folder.ts).
 */
const RUN_TMPDIR = join(tmpdir(), `dus-run-${process.pid}`);

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
    env: { POWERTOOLS_LOG_LEVEL: 'SILENT', TMPDIR: RUN_TMPDIR },
    // The root's global setup runs once per run (projects do not inherit it); its teardown, after every test.
    globalSetup: ['test/support/temp-folder.ts'],
    // Where each test file saves the AWS calls its functions made (removed by the global teardown).
    provide: { awsCallsDir: join(tmpdir(), `dus-aws-calls-${process.pid}`) },
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: [IAM_TEST],
          // One DynamoDB Local for the run; every test file makes its own table, so files run in parallel.
          globalSetup: ['test/support/global-setup.ts'],
          // Records every AWS call each function makes, for the IAM test.
          setupFiles: ['test/support/record-aws-calls.ts'],
          // An explicit order (not the default 0, which vitest may schedule after every numbered group).
          sequence: { groupOrder: 1 },
        },
      },
      {
        // Runs after the whole suite (a higher group order), on what the suite recorded.
        extends: true,
        test: { name: 'iam', include: [IAM_TEST], sequence: { groupOrder: 2 } },
      },
    ],
  },
});

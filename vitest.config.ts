import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One DynamoDB Local for the run; every test file makes its own table, so files run in parallel.
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
    env: { POWERTOOLS_LOG_LEVEL: 'SILENT' },
  },
});

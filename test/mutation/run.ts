import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { MutationTestResult } from 'mutation-testing-report-schema';
import { checkScores } from './check-scores.ts';

/**
 * `npm run mutate [-- <Stryker options>]`: runs Stryker with stryker.config.mjs (options such as
 * `--mutate shared/http/form.ts` or `--concurrency 1` pass through), then checks the per-module
 * floors on its JSON report. Exit status 0 only when Stryker passed and every floor holds.
 */
const REPORT = 'reports/mutation/mutation.json';

// A report of an earlier run must not stand in for a run that failed before writing one.
rmSync('reports/mutation', { recursive: true, force: true });
const stryker = spawnSync('stryker', ['run', 'stryker.config.mjs', ...process.argv.slice(2)], { stdio: 'inherit' });
if (stryker.error) throw stryker.error;
if (!existsSync(REPORT)) {
  console.error(`Stryker wrote no report (${REPORT}); see its output above.`);
  process.exit(stryker.status || 1);
}
const { lines, failures } = checkScores(JSON.parse(readFileSync(REPORT, 'utf8')) as MutationTestResult);
console.log(['', 'Mutation score per module:', ...lines.map((line) => `  ${line}`)].join('\n'));
for (const failure of failures) console.error(`FAIL ${failure}`);
process.exit(failures.length > 0 ? 1 : (stryker.status ?? 1));

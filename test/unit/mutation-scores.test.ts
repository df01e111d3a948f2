import { readFileSync } from 'node:fs';
import type { MutationTestResult } from 'mutation-testing-report-schema';
import { describe, expect, it } from 'vitest';
import { checkScores } from '../mutation/check-scores.ts';

/** A small Stryker report: form.ts at exactly 90 %, password.ts at 80 %, csrf.ts at 50 %, 19 of 24 overall. */
function fixture(): MutationTestResult {
  return JSON.parse(readFileSync(new URL('../mutation/fixtures/small-report.json', import.meta.url), 'utf8')) as MutationTestResult;
}

describe('mutation score check (npm run mutate)', () => {
  it('fails a security module under 90 % and the whole run under 80 %, not a module at exactly 90 %', () => {
    const { failures, lines } = checkScores(fixture());

    expect(failures).toEqual([
      'shared/accounts/password.ts scores 80.00 %, under its floor of 90 %',
      'all mutated files together score 79.17 %, under the floor of 80 %',
    ]);
    expect(lines).toContain('shared/http/form.ts: 90.00 % (9 killed, 1 survived, 0 not covered) floor 90 %');
  });

  it('holds no module that is not a security module to 90 %', () => {
    const report = fixture();
    delete report.files['shared/accounts/password.ts'];

    // form.ts 9 of 10 and csrf.ts 2 of 4: 11 of 14 (78.57 %), only the overall floor fails.
    expect(checkScores(report).failures).toEqual(['all mutated files together score 78.57 %, under the floor of 80 %']);
  });

  it('passes a report whose security modules reach 90 % and whose total reaches 80 %', () => {
    const report = fixture();
    for (const mutant of report.files['shared/accounts/password.ts']!.mutants) mutant.status = 'Killed';

    expect(checkScores(report).failures).toEqual([]);
  });

  it('reads file names given as absolute paths as the repository paths they are', () => {
    const report = fixture();
    report.files = Object.fromEntries(Object.entries(report.files).map(([name, file]) => [`/repo/${name}`, file]));

    expect(checkScores(report, '/repo').failures).toContain('shared/accounts/password.ts scores 80.00 %, under its floor of 90 %');
  });

  it('fails a report in which no mutant was tested', () => {
    const report = fixture();
    report.files = {};

    expect(checkScores(report).failures).toEqual(['the report has no mutant that was tested']);
  });
});

import { relative, resolve } from 'node:path';
import { calculateMetrics } from 'mutation-testing-metrics';
import type { MutationTestResult } from 'mutation-testing-report-schema';
import securityModules from './security-modules.json' with { type: 'json' };

/**
 * The modules that decide who gets a token or a device: each must keep a mutation score of at least
 * {@link MODULE_FLOOR} on its own, whatever the rest of the code scores. They are what
 * `npm run mutate` mutates unless told otherwise (stryker.config.mjs reads the same list).
 */
export const SECURITY_MODULES: readonly string[] = securityModules;

/** Percentages: the floor of each security module, and of all the mutated code together. */
export const MODULE_FLOOR = 90;
export const OVERALL_FLOOR = 80;

export interface ScoreCheck {
  /** One line per mutated file and one for the whole run, for the terminal. */
  lines: string[];
  /** What is under its floor, one sentence each; empty when the report passes. */
  failures: string[];
}

/**
 * Checks a Stryker JSON report (mutation-testing-report-schema) against the floors: every security
 * module present in the report at {@link MODULE_FLOOR} or more, the report as a whole at
 * {@link OVERALL_FLOOR} or more. The score is Stryker's own (killed and timed out over killed, timed
 * out, survived and uncovered; ignored mutants and compile errors do not count). A report that mutated
 * nothing fails: a run that measured nothing proves nothing.
 */
export function checkScores(report: MutationTestResult, root = process.cwd()): ScoreCheck {
  const files = Object.fromEntries(Object.entries(report.files).map(([name, file]) => [relative(root, resolve(root, name)).split('\\').join('/'), file]));
  const lines: string[] = [];
  const failures: string[] = [];
  for (const [name, file] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
    const { killed, timeout, survived, noCoverage, mutationScore } = calculateMetrics({ [name]: file }).metrics;
    const floor = SECURITY_MODULES.includes(name) ? MODULE_FLOOR : undefined;
    lines.push(`${name}: ${format(mutationScore)} (${killed + timeout} killed, ${survived} survived, ${noCoverage} not covered)${floor ? ` floor ${floor} %` : ''}`);
    if (floor !== undefined && !(mutationScore >= floor)) failures.push(`${name} scores ${format(mutationScore)}, under its floor of ${floor} %`);
  }
  const overall = calculateMetrics(files).metrics;
  lines.push(`all mutated files: ${format(overall.mutationScore)} (${overall.totalValid} mutants) floor ${OVERALL_FLOOR} %`);
  if (overall.totalValid === 0) failures.push('the report has no mutant that was tested');
  else if (!(overall.mutationScore >= OVERALL_FLOOR)) failures.push(`all mutated files together score ${format(overall.mutationScore)}, under the floor of ${OVERALL_FLOOR} %`);
  return { lines, failures };
}

function format(score: number): string {
  return Number.isNaN(score) ? 'no tested mutant' : `${score.toFixed(2)} %`;
}

import { round } from './stats.ts';

/** The benchmark's budgets, in one place. */
export const BUDGETS = {
  resourceRequestsPerCall: 1,
  tokenRequestsPerCall: 2,
  resourceBundleRatio: 1.15,
  authBundleRatio: 1.25,
  coldStartRatio: 1.1,
  warmP50Ratio: 1.1,
  warmP99Ratio: 1.25,
  clientAuthCpuMs: 0.1,
} as const;

export interface BudgetCheck {
  /** Stable id, e.g. `bundle-ratio:get-user`. */
  id: string;
  subject: string;
  description: string;
  value: number | boolean;
  limit: number | boolean;
  pass: boolean;
}

export function check(id: string, subject: string, description: string, value: number, limit: number): BudgetCheck {
  return { id: `${id}:${subject}`, subject, description, value: round(value, 4), limit, pass: value <= limit };
}

/**
 * How a finished run ends: exit status 1 when a budget failed, unless the run is informational
 * (`--informational`), and the line that says why.
 */
export function outcome(budgets: readonly BudgetCheck[], informational: boolean): { exitCode: 0 | 1; message: string } {
  const failed = budgets.filter((b) => !b.pass).map((b) => b.id);
  if (failed.length === 0) return { exitCode: 0, message: `All ${budgets.length} budgets pass.` };
  const what = `${failed.length} of ${budgets.length} budgets failed (${failed.join(', ')})`;
  return informational
    ? { exitCode: 0, message: `${what}; --informational: exit status 0.` }
    : { exitCode: 1, message: `${what}: exit status 1 (--informational reports without failing).` };
}

export const verdict = (pass: boolean | undefined) => (pass === undefined ? '' : pass ? 'PASS' : 'FAIL');

/** A plain-text table: right-aligned numbers, left-aligned text. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => String(c)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.every((r) => typeof r[i] === 'number' || /^[\d.,/ ×–-]*( (PASS|FAIL))?$/.test(String(r[i] ?? ''))));
  const line = (r: string[]) => r.map((c, i) => (numeric[i] && i > 0 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export const fmt = (value: number | undefined, digits = 2) => (value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits));

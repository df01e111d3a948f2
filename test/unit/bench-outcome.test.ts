import { describe, expect, it } from 'vitest';
import { outcome, type BudgetCheck } from '../../bench/report';

const budget = (id: string, pass: boolean): BudgetCheck => ({ id, subject: id.split(':')[1]!, description: '', value: pass ? 1 : 2, limit: 1, pass });

describe('the benchmark\'s exit status', () => {
  const passing = [budget('bundle-ratio:get-user', true), budget('cold-start-ratio:get-user', true)];
  const failing = [...passing, budget('cold-start-ratio:list-devices', false), budget('warm-p99-ratio:get-device', false)];

  it('is 0 when every budget passes', () => {
    expect(outcome(passing, false)).toEqual({ exitCode: 0, message: 'All 2 budgets pass.' });
    expect(outcome(passing, true).exitCode).toBe(0);
  });

  it('is 1 when a budget fails, naming the failed budgets', () => {
    expect(outcome(failing, false)).toEqual({
      exitCode: 1,
      message: '2 of 4 budgets failed (cold-start-ratio:list-devices, warm-p99-ratio:get-device): exit status 1 (--informational reports without failing).',
    });
  });

  it('stays 0 with --informational, still naming the failed budgets', () => {
    expect(outcome(failing, true)).toEqual({
      exitCode: 0,
      message: '2 of 4 budgets failed (cold-start-ratio:list-devices, warm-p99-ratio:get-device); --informational: exit status 0.',
    });
  });
});

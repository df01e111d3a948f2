import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { BENCHED } from '../../bench/functions';
import { ENV, WEBHOOK_ENV } from '#shared/config';
import { endpointOf } from '#functions/registry';
import type { Scenario } from '../../bench/scenarios';

// `npm run bench` must measure every function that is deployed or run: held here against the handler
// files on disk (every module under functions/ that exports a handler), not against the route table
// the benchmark's list is made from, so that a function dropped from the list (or from the table)
// fails this test.

const ROOT = join(import.meta.dirname, '..', '..');

/** `functions/<area>/<name>.ts` of every file under functions/ that exports `handler`, sorted. */
function handlerFiles(): string[] {
  return readdirSync(join(ROOT, 'functions'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => `functions/${name.split('\\').join('/')}`)
    .filter((file) => /\bexport\s+(?:async\s+function\s+handler\b|const\s+handler\b|function\s+handler\b|\{[^}]*\bhandler\b)/.test(readFileSync(join(ROOT, file), 'utf8')))
    .sort();
}

/** The functions without an HTTP route, by their handler files (the scheduled key rotation and the webhook pipeline's two). */
const WITHOUT_ROUTE = ['functions/ops/rotate-signing-key.ts', 'functions/webhooks/fan-out-events.ts', 'functions/webhooks/deliver-webhooks.ts'];

describe('the benchmark\'s function list', () => {
  it('holds the function of every handler file under functions/, and no other', () => {
    const files = handlerFiles();
    expect(files.length).toBeGreaterThan(40);
    expect(BENCHED.map((fn) => endpointOf(fn).entry).sort()).toEqual(files);
  });

  it('holds the three functions without an HTTP route', () => {
    expect(handlerFiles()).toEqual(expect.arrayContaining(WITHOUT_ROUTE));
    expect(BENCHED.map((fn) => endpointOf(fn).entry)).toEqual(expect.arrayContaining(WITHOUT_ROUTE));
  });

  /** The benchmark's scenarios, made as bench/run.ts makes them (no request is made: no events are asked for). */
  async function withScenarios(check: (scenarios: Scenario[]) => void) {
    // The scenarios' module loads the functions' runtime, which reads its environment at load (no request is made).
    vi.stubEnv(ENV.tableName, 'bench-coverage');
    vi.stubEnv(ENV.issuer, 'https://auth.example.com');
    vi.stubEnv(ENV.audience, 'https://api.example.com');
    vi.stubEnv(WEBHOOK_ENV.queueUrl, 'http://127.0.0.1:9/000000000000/webhook-deliveries');
    const { createScenarios } = await import('../../bench/scenarios');
    const { scenarios, close } = createScenarios({
      endpoint: 'http://127.0.0.1:9', table: 'bench-coverage', authUrl: 'https://auth.example.com', keyFile: join(ROOT, 'no-such-key.pem'),
      webhookEnds: { receiverOrigin: 'http://127.0.0.1:9', received: () => 0 },
    });
    try {
      check(scenarios);
    } finally {
      close();
      vi.unstubAllEnvs();
    }
  }

  it('has a scenario for each (its cold start serves the first), of its own with a floor for those without an HTTP route', async () => {
    await withScenarios((scenarios) => {
      for (const fn of BENCHED) expect(scenarios.some((s) => s.fn === fn), fn).toBe(true);
      for (const entry of WITHOUT_ROUTE) {
        const first = scenarios.find((s) => endpointOf(s.fn).entry === entry);
        expect(first, entry).toBeDefined();
        expect(first!.name, entry).not.toMatch(/generic/);
        expect(first!.floor, entry).not.toHaveLength(0);
        // Its result is checked (it answers no status).
        expect(first!.expectResult, entry).toBeDefined();
      }
    });
  });

  it('makes the scenario of a function whose declaration has a bench from the declaration: its sample\'s status, its floor and reason', async () => {
    const declared = BENCHED.filter((fn) => endpointOf(fn).bench);
    expect(declared.length).toBeGreaterThan(10);
    await withScenarios((scenarios) => {
      for (const fn of declared) {
        const { bench, sample } = endpointOf(fn);
        expect(scenarios.filter((s) => s.fn === fn).map(({ name, expectStatus, floor, minReason }) => ({ name, expectStatus, floor, minReason })), fn)
          .toEqual([{ name: fn, expectStatus: sample.status, floor: bench!.floor, minReason: bench!.minReason }]);
      }
    });
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BEGIN, bindingLimits, callsPerUserMonth, cognitoCost, END, monthlyCost, OPERATIONS_MD, parseFloor, parseResultsMarkdown,
  peakRps, perCall, renderTables, requestUnits, RESULTS_MD, RUNTIME, USAGE, withTables, type Measured,
} from '../../bench/cost-model';
import { DEPLOYED_ROUTES, PLANNED_MONTHLY_ACTIVE_USERS, THROTTLES } from '#shared/routes';

const measured = parseResultsMarkdown(readFileSync(RESULTS_MD, 'utf8'));

describe('cost model: reading the benchmark', () => {
  it('reads every scenario of the printed run, with its latency, CPU, cold start, requests and floor', () => {
    // Every call the usage model assumes has a measured scenario to price it with.
    for (const scenario of Object.keys(callsPerUserMonth())) expect(measured.map((m) => m.scenario)).toContain(scenario);
    const refresh = measured.find((m) => m.scenario === 'post-token (refresh)')!;
    expect(refresh).toMatchObject({ fn: 'post-token', p50Ms: 8.89, cpuMs: 1.437, coldMs: 193.8, requestsPerCall: 2 });
    expect(refresh.floor).toBe('BatchGetItem(refreshToken, client) + TransactWriteItems(family, refreshToken, refreshToken) + RS256 signature');
    // The second scenario of a function has no cold start of its own: it is the function's.
    expect(measured.find((m) => m.scenario === 'post-token (code)')!.coldMs).toBe(193.8);
    expect(measured.find((m) => m.scenario === 'get-login')!).toMatchObject({ p50Ms: 0.04, cpuMs: 0.059, requestsPerCall: 0, floor: 'none' });
  });

  it('finds in every floor the requests the benchmark measured (else it cannot price the call)', () => {
    for (const m of measured) expect(() => perCall(m), m.scenario).not.toThrow();
    const wrong: Measured = { ...measured.find((m) => m.scenario === 'get-user')!, requestsPerCall: 2 };
    expect(() => perCall(wrong)).toThrow(/measured 2 DynamoDB requests per call/);
  });

  it('turns floors into request units: consistency, transactions and index writes', () => {
    expect(requestUnits(parseFloor('GetItem(user)'))).toEqual({ rru: 0.5, wru: 0, requests: 1 });
    expect(requestUnits(parseFloor('GetItem(link)'))).toEqual({ rru: 1, wru: 0, requests: 1 });
    expect(requestUnits(parseFloor('Query(gsi1: session ×0)'))).toEqual({ rru: 0.5, wru: 0, requests: 1 });
    // Refresh: 2 consistent reads; 3 transactional writes (2 WRU each) and the family's index entry.
    expect(requestUnits(parseFloor('BatchGetItem(refreshToken, client) + TransactWriteItems(family, refreshToken, refreshToken) + RS256 signature')))
      .toEqual({ rru: 2, wru: 7, requests: 2 });
    expect(requestUnits(parseFloor('wait 750 ms + GetItem(email) + GetItem(user) + PutItem(link)'))).toEqual({ rru: 1, wru: 1, requests: 3 });
    expect(requestUnits(parseFloor('DeleteItem(session)'))).toEqual({ rru: 0, wru: 2, requests: 1 });
    expect(parseFloor('none')).toEqual([]);
    expect(() => parseFloor('Scan(everything)')).toThrow(/unknown floor step/);
  });
});

describe('cost model: arithmetic', () => {
  const poll: Measured = { scenario: 'list-devices', fn: 'list-devices', p50Ms: 1.5, cpuMs: 0, coldMs: 100, requestsPerCall: 1, floor: 'Query(device ×3)' };

  it('bills a call for its whole milliseconds in AWS plus its share of cold starts', () => {
    // 1.5 ms measured + 3 ms for the in-region round trip → 5 billed ms; 1 % of 100 ms of INIT.
    expect(perCall(poll)).toMatchObject({ awsMs: 4.5, billedMs: 6, rru: 0.5, wru: 0, signs: 0, mails: 0 });
    // CPU-bound work runs at 512/1769 of a vCPU; a signature and an e-mail add their round trips.
    const login = perCall({ ...poll, scenario: 'post-login', fn: 'post-login', p50Ms: 100, cpuMs: 100, floor: 'BatchGetItem(email, throttle, throttle) + GetItem(user) + scrypt + PutItem(session)', requestsPerCall: 3 });
    expect(login.awsMs).toBeCloseTo(100 + 100 * (1769 / 512 - 1) + 3 * 3, 6);
    expect(perCall({ ...poll, scenario: 'post-signup', fn: 'post-signup', floor: 'scrypt + TransactWriteItems(user, email, link)' }).mails).toBe(1);
    expect(perCall({ ...poll, fn: 'post-token', floor: 'BatchGetItem(code, client) + TransactWriteItems(code, family, refreshToken) + RS256 signature', requestsPerCall: 2 }))
      .toMatchObject({ signs: 1, awsMs: 1.5 + 2 * 3 + 10 });
  });

  it('adds up a month of polls by hand', () => {
    const cost = monthlyCost(1000, [poll]);
    const calls = 1000 * 2 * 60 * 30; // 2 h a day, a poll a minute, 30 days
    expect(cost.requests).toBe(calls);
    expect(cost.lines.apiGateway).toBeCloseTo(calls * 1.0 / 1e6, 9);
    expect(cost.lines.lambda).toBeCloseTo(calls * 0.2 / 1e6 + calls * 0.006 * 0.5 * 0.0000133334, 9);
    // No rotated refresh tokens are stored: a rotation rewrites the family item.
    const storageGb = 1000 * RUNTIME.storageBytesPerUser / 1e9;
    expect(cost.lines.dynamoDb).toBeCloseTo(calls * 0.5 * 0.125 / 1e6 + storageGb * (0.25 + 0.2), 9);
    expect(cost.lines.logs).toBeCloseTo(calls * RUNTIME.logBytesPerCall / 1e9 * (0.5 + 0.03), 9);
    expect(cost.lines.kms).toBe(1); // the key alone
    expect(cost.lines.ses).toBe(0);
    expect(cost.total).toBeCloseTo(Object.values(cost.lines).reduce((a, b) => a + b, 0), 9);
    expect(cost.resourceApi + cost.authServer).toBeCloseTo(cost.total, 9);
  });

  it('prices API Gateway requests beyond 300 million a month at $0.90 per million', () => {
    const mau = 200_000; // 720 million polls
    expect(monthlyCost(mau, [poll]).lines.apiGateway).toBeCloseTo(300 + (mau * 3600 - 300e6) * 0.9 / 1e6, 6);
  });

  it('prices Cognito by plan, with Lite in tiers and the first 10,000 users free in Lite and Essentials', () => {
    expect(cognitoCost(1_000)).toEqual({ lite: 0, essentials: 0, plus: 20 });
    expect(cognitoCost(100_000).lite).toBeCloseTo(90_000 * 0.0055, 9);
    expect(cognitoCost(100_000).essentials).toBeCloseTo(90_000 * 0.015, 9);
    expect(cognitoCost(1_000_000).lite).toBeCloseTo(90_000 * 0.0055 + 900_000 * 0.0046, 9);
  });

  it('derives the busiest hour from the month: calls × users ÷ seconds × peak factor', () => {
    expect(callsPerUserMonth()['list-devices']).toBe(3600);
    expect(peakRps(250_000)['list-devices']).toBeCloseTo(250_000 * 3600 / (30 * 86_400) * 3, 9);
  });

  it('orders the limits as they bind, each at a positive number of users', () => {
    const limits = bindingLimits(measured);
    expect(limits.map((l) => l.bindsAtMau)).toEqual([...limits.map((l) => l.bindsAtMau)].sort((a, b) => a - b));
    expect(limits.every((l) => l.bindsAtMau > 0 && Number.isFinite(l.bindsAtMau))).toBe(true);
    // The KMS quota binds where the token requests of the busiest hour reach 500/s.
    const kms = limits.find((l) => l.limit.startsWith('KMS'))!;
    const tokens = peakRps(kms.bindsAtMau);
    expect(tokens['post-token (refresh)']! + tokens['post-token (code)']!).toBeCloseTo(500, 6);
  });
});

describe('route throttles against the usage model', () => {
  it('carry the busiest hour at the planned number of users, every route key on its own', () => {
    const peak = peakRps(PLANNED_MONTHLY_ACTIVE_USERS);
    for (const [scenario, rps] of Object.entries(peak)) {
      const fn = scenario.replace(/ \(.*\)$/, '');
      const route = DEPLOYED_ROUTES.find((r) => r.fn === fn)!;
      expect(rps, scenario).toBeLessThanOrEqual(THROTTLES[route.throttle].rateLimit);
    }
    // GET /devices is the one the throttle of resource reads is sized on, with headroom.
    expect(peak['list-devices']! / THROTTLES['resource-read'].rateLimit).toBeGreaterThan(0.5);
    expect(peak['list-devices']! / THROTTLES['resource-read'].rateLimit).toBeLessThan(0.8);
    expect(Math.round(peak['list-devices']! / 10) * 10).toBe(1040); // as its reason says
  });
});

describe('docs/operations.md', () => {
  it('holds exactly the tables the model computes from bench/RESULTS.md (npm run cost -- --write)', () => {
    const page = readFileSync(OPERATIONS_MD, 'utf8');
    expect(page).toContain(BEGIN);
    expect(page).toContain(END);
    expect(withTables(page, renderTables(measured))).toBe(page);
  });

  it('would notice a changed figure', () => {
    const page = readFileSync(OPERATIONS_MD, 'utf8');
    const cheaper = measured.map((m) => (m.scenario === 'list-devices' ? { ...m, requestsPerCall: 0, floor: 'none' } : m));
    expect(withTables(page, renderTables(cheaper))).not.toBe(page);
  });

  it('states the usage the numbers assume', () => {
    const page = readFileSync(OPERATIONS_MD, 'utf8');
    expect(page).toContain(`every ${USAGE.pollSeconds} s`);
    expect(page).toContain(`${USAGE.appHoursPerDay} hours a day`);
  });
});

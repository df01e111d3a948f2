import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BEGIN, bindingLimits, callsPerUserMonth, cognitoCost, deliveriesPerUserMonth, END, monthlyCost, OPERATIONS_MD, parseFloor,
  parseResultsMarkdown, parseWebhookResultsMarkdown, peakRps, perCall, perDelivery, PUSH, pushBindingLimits, pushMonthlyCost,
  renderTables, requestUnits, RESULTS_MD, RUNTIME, USAGE, webhookMeasuredFromJson, withTables, type Measured, type WebhookMeasured,
} from '../../bench/cost-model';
import { DEPLOYED_ROUTES } from '#functions/registry';
import { PLANNED_MONTHLY_ACTIVE_USERS, THROTTLES } from '#shared/routes';

const measured = parseResultsMarkdown(readFileSync(RESULTS_MD, 'utf8'));
const webhookFigures = parseWebhookResultsMarkdown(readFileSync(RESULTS_MD, 'utf8'));

describe('cost model: reading the benchmark', () => {
  it('reads every scenario of the printed run, with its latency, CPU, cold start, requests and floor', () => {
    // Every call the usage model assumes has a measured scenario to price it with.
    for (const scenario of Object.keys(callsPerUserMonth())) expect(measured.map((m) => m.scenario)).toContain(scenario);
    const refresh = measured.find((m) => m.scenario === 'post-token (refresh)')!;
    expect(refresh).toMatchObject({ fn: 'post-token', p50Ms: 4.89, cpuMs: 0.925, coldMs: 128.2, requestsPerCall: 2 });
    expect(refresh.floor).toBe('GetItem(keySchedule) + BatchGetItem(family, client, consent) + UpdateItem(family) + RS256 signature');
    // The second scenario of a function has no cold start of its own: it is the function's.
    expect(measured.find((m) => m.scenario === 'post-token (code)')!.coldMs).toBe(128.2);
    expect(measured.find((m) => m.scenario === 'get-login')!).toMatchObject({ p50Ms: 0.02, cpuMs: 0.035, requestsPerCall: 0, floor: 'none' });
    // A handler that measured less CPU than its bare requests (noise) reads as negative, and costs none.
    const logout = measured.find((m) => m.scenario === 'post-logout')!;
    expect(logout.cpuMs).toBe(-0.009);
    expect(perCall(logout).awsMs).toBeCloseTo(logout.p50Ms + RUNTIME.dynamoDbExtraMs, 9);
    // A function without a scenario of its own (a "(generic)" row, no floor) is not read.
    expect(measured.some((m) => m.scenario.includes('generic'))).toBe(false);
  });

  it('finds in every floor the requests the benchmark measured (else it cannot price the call)', () => {
    for (const m of measured) expect(() => perCall(m), m.scenario).not.toThrow();
    const wrong: Measured = { ...measured.find((m) => m.scenario === 'get-user')!, requestsPerCall: 2 };
    expect(() => perCall(wrong)).toThrow(/measured 2 DynamoDB requests per call/);
    // The signing-key schedule is read at a cold start, then cached: a warm call pays none of it.
    expect(perCall({ ...measured.find((m) => m.scenario === 'get-jwks')!, floor: 'GetItem(keySchedule)', requestsPerCall: 0 })).toMatchObject({ rru: 0, wru: 0 });
    // The token endpoint keeps the client 5 s too: its warm calls read the family and the consent; a page that reads the client pays for it.
    expect(perCall(measured.find((m) => m.scenario === 'post-token (refresh)')!)).toMatchObject({ rru: 2, requests: 2, signs: 1 });
    expect(perCall({ ...measured.find((m) => m.scenario === 'get-app')!, floor: 'BatchGetItem(session, user, client)', requestsPerCall: 1 })).toMatchObject({ rru: 3 });
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
    expect(parseFloor('BatchGetItem(session, user) + PutItem(link) + e-mail')).toEqual([
      { op: 'BatchGetItem', of: ['session', 'user'] }, { op: 'PutItem', of: ['link'] }, { op: 'mail' },
    ]);
    expect(requestUnits(parseFloor('BatchGetItem(session, user, client, webhook) + address check + UpdateItem(webhook)'))).toEqual({ rru: 4, wru: 1, requests: 2 });
    expect(parseFloor('none')).toEqual([]);
    expect(() => parseFloor('Scan(everything)')).toThrow(/unknown floor step/);
  });

  it('reads the floors of the functions without an HTTP route, and prices the rotation\'s read of the schedule on every run', () => {
    // As bench/floors.ts labels them (the rows of a full run's bench-results.json, which `npm run cost -- --results` reads).
    const row = (scenario: string, floor: string, requestsPerCall: number): Measured => ({
      scenario, fn: scenario.replace(/ \(.*\)$/, '') as Measured['fn'], p50Ms: 1, cpuMs: 0.5, coldMs: 100, requestsPerCall, floor,
    });
    const rotation = row('rotate-signing-key (report)', 'KMS client + GetItem(keySchedule)', 1);
    const fanOut = row('fan-out-events (1 webhook)', 'Query(consent ×1) + BatchGetItem(webhook) + TransactWriteItems(delivery, consent) + SQS send', 3);
    const deliver = row('deliver-webhooks (delivered)', 'SQS client + BatchGetItem(delivery, webhook, consent) + signed POST + UpdateItem(delivery)', 2);
    expect(parseFloor(rotation.floor)).toEqual([{ op: 'kmsClient' }, { op: 'GetItem', of: ['keySchedule'] }]);
    expect(parseFloor(fanOut.floor).at(-1)).toEqual({ op: 'queueSend' });
    expect(parseFloor(deliver.floor)[2]).toEqual({ op: 'signedPost' });
    // The rotation reads the schedule strongly consistent each run (the token endpoint and the JWKS keep theirs a minute).
    expect(perCall(rotation)).toMatchObject({ rru: 1, wru: 0, requests: 1 });
    // The design's counts of the webhook benchmark (cost-model perDelivery): fan-out one transaction (the delivery, guarded by
    // the consent; the floor puts the consent, so its index write too) and two reads, delivery 3 RRU and 1 WRU.
    expect(perCall(fanOut)).toMatchObject({ rru: 1.5, wru: 5, requests: 3 });
    expect(perCall(deliver)).toMatchObject({ rru: 3, wru: 1, requests: 2, signs: 0, mails: 0 });
    // None of them is an API call of the usage model: a month of it costs as much with them as without.
    expect(monthlyCost(100_000, [...measured, rotation, fanOut, deliver]).total).toBeCloseTo(monthlyCost(100_000, measured).total, 9);
    expect(() => bindingLimits([...measured, rotation, fanOut, deliver])).not.toThrow();
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
    expect(perCall({ ...poll, scenario: 'post-signup', fn: 'post-signup', floor: 'scrypt + TransactWriteItems(user, email, link) + e-mail', p50Ms: 1.5 }))
      .toMatchObject({ mails: 1, awsMs: 1.5 + 3 + RUNTIME.sesSendMs });
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

describe('cost model: push instead of polling', () => {
  const poll: Measured = { scenario: 'list-devices', fn: 'list-devices', p50Ms: 1.5, cpuMs: 0, coldMs: 100, requestsPerCall: 1, floor: 'Query(device ×3)' };
  const w: WebhookMeasured = {
    dynamodbRequestsPerEvent: { fanOut: 2, deliver: 2 },
    lambdaMsPerEvent: { fanOut: 10, deliver: 20 },
    invocationsPerEvent: { fanOut: 0.1, deliver: 0.1 },
  };
  // 2 devices × 5 events a day × 30 days, one subscribed application: 300 deliveries per user and month.
  const push = { ...PUSH, devicesPerUser: 2, eventsPerDevicePerDay: 5, appsPerUser: 1, subscribedShare: 1, retriesPerDelivery: 0,
    receiverMs: 100, deliveryItemBytes: 1000, sqsIdleReceivesPerMonth: 0 };

  it('reads the webhook benchmark\'s printed figures, and its section of bench-results.json', () => {
    expect(webhookFigures).toEqual({
      dynamodbRequestsPerEvent: { fanOut: 1.62, deliver: 2.31 },
      lambdaMsPerEvent: { fanOut: 18.87, deliver: 201.41 },
      invocationsPerEvent: { fanOut: 0.028, deliver: 0.139 },
    });
    expect(webhookMeasuredFromJson({ webhooks: { ...w, delivered: 3 } })).toEqual(w);
    expect(webhookMeasuredFromJson({ schemaVersion: 2 })).toBeUndefined();
    expect(() => parseWebhookResultsMarkdown('# nothing')).toThrow(/Webhook pipeline/);
  });

  it('prices a delivered event by hand: milliseconds, invocations, request units, SQS requests', () => {
    expect(deliveriesPerUserMonth(push)).toBe(300);
    // fan-out 10 ms + 2 × 3 ms; delivery 20 ms + 2 × 3 ms + 100 ms of receiver shared by 10 messages.
    expect(perDelivery(w, push)).toMatchObject({ invocations: 0.2, rru: 1 + 3, wru: 4 + 1, deliveriesPartitionWru: 2 + 1, logBytes: 0.2 * 800 });
    expect(perDelivery(w, push).lambdaMs).toBeCloseTo(16 + 36, 9);
    expect(perDelivery(w, push).sqsRequests).toBeCloseTo(0.1 + 2, 9);
    // Half the deliveries need a second attempt: the delivery's part again, one more UpdateItem, receive and delete.
    const retried = perDelivery(w, { ...push, retriesPerDelivery: 0.5 });
    expect(retried.lambdaMs).toBeCloseTo(16 + 36 * 1.5, 9);
    expect(retried).toMatchObject({ invocations: 0.1 + 0.15, rru: 1 + 4.5, wru: 4 + 1.5, deliveriesPartitionWru: 2 + 1.5 });
    expect(retried.sqsRequests).toBeCloseTo(0.1 + 3, 9);
  });

  it('adds up a month of push by hand: no polls, deliveries instead', () => {
    const cost = pushMonthlyCost(1000, [poll], w, push);
    const deliveries = 1000 * 300;
    expect(cost.deliveries).toBe(deliveries);
    expect(cost.api.requests).toBe(0); // the polls are gone
    expect(cost.lines.lambda).toBeCloseTo(deliveries * (0.2 * 0.2 / 1e6 + 0.052 * 0.5 * 0.0000133334), 9);
    expect(cost.lines.dynamoDb).toBeCloseTo(deliveries * (4 * 0.125 + 5 * 0.625) / 1e6 + deliveries * 1000 / 1e9 * (0.25 + 0.2), 9);
    expect(cost.lines.sqs).toBeCloseTo(deliveries * 2.1 * 0.4 / 1e6, 9);
    expect(cost.lines.logs).toBeCloseTo(deliveries * 160 / 1e9 * (0.5 + 0.03), 9);
    expect(cost.lines.streams).toBe(0); // GetRecords by a Lambda trigger is free
    // Lambda $0.012 + $0.104, DynamoDB $1.0875 + $0.135 (0.3 GB kept), SQS $0.252, logs $0.02544.
    expect(cost.total).toBeCloseTo(cost.api.total + 0.116 + 1.2225 + 0.252 + 0.02544, 3);
    // Lambda's idle long polls: 648,000 receives a month.
    expect(pushMonthlyCost(1000, [poll], w, { ...push, sqsIdleReceivesPerMonth: 648_000 }).lines.sqs).toBeCloseTo(cost.lines.sqs + 0.2592, 9);
  });

  it('finds where the partition of a popular application\'s deliveries binds, by hand', () => {
    const limit = pushBindingLimits([poll], w, push).find((l) => l.limit.includes('DELIVERIES#'))!;
    // 300 deliveries a month → ×3 in the busiest hour → 3 WRU each in the partition (the delivery in a transaction: 2; its
    // UpdateItem: 1; the transaction's ConditionCheck is on the consent or webhook, elsewhere) = 1,000 WRU/s.
    expect(limit.bindsAtMau).toBeCloseTo(1000 / (300 / (30 * 86_400) * 3 * 3), 3);
    expect(limit.bindsAtMau).toBeCloseTo(960_000, 3);
  });

  it('at 1 million users with the measured figures, push costs less than polling, and the page says so', () => {
    const polling = monthlyCost(1_000_000, measured);
    const pushed = pushMonthlyCost(1_000_000, measured, webhookFigures);
    expect(pushed.deliveries).toBe(1_000_000 * 3 * 4 * 30 * 1.5);
    expect(pushed.api.requests).toBeCloseTo(polling.requests - 1_000_000 * 3600, 0);
    expect(pushed.total).toBeLessThan(polling.total);
    const page = readFileSync(OPERATIONS_MD, 'utf8');
    expect(page).toContain('Polling or push at 1 M MAU');
    expect(page).toContain(`${PUSH.eventsPerDevicePerDay} device events per device and`);
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
    expect(withTables(page, renderTables(measured, webhookFigures))).toBe(page);
  });

  it('would notice a changed figure', () => {
    const page = readFileSync(OPERATIONS_MD, 'utf8');
    const cheaper = measured.map((m) => (m.scenario === 'list-devices' ? { ...m, requestsPerCall: 0, floor: 'none' } : m));
    expect(withTables(page, renderTables(cheaper, webhookFigures))).not.toBe(page);
    const cheaperPush = { ...webhookFigures, lambdaMsPerEvent: { fanOut: 1, deliver: 1 } };
    expect(withTables(page, renderTables(measured, cheaperPush))).not.toBe(page);
  });

  it('states the usage the numbers assume', () => {
    const page = readFileSync(OPERATIONS_MD, 'utf8');
    expect(page).toContain(`every ${USAGE.pollSeconds} s`);
    expect(page).toContain(`${USAGE.appHoursPerDay} hours a day`);
  });
});

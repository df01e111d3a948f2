import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** Loads shared/log.ts afresh with the given level, capturing what it writes to each stream. */
async function loadLogger(level: string) {
  vi.resetModules();
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', level);
  vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', '');
  vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-abc-def;Parent=1;Sampled=0');
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { out.push(String(chunk)); return true; });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => { err.push(String(chunk)); return true; });
  const { logger } = await import('#shared/log');
  return { logger, out, err };
}

describe('logger', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date('2026-05-06T07:08:09.010Z'), toFake: ['Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it("writes one JSON line in Powertools' shape, leaving out empty attributes", async () => {
    const { logger, out } = await loadLogger('INFO');

    logger.info('request', { route: 'GET /user', status: 200, latencyMs: 1.5, requestId: 'r-1', absent: undefined, blank: '' });

    expect(out).toHaveLength(1);
    expect(out[0]!.endsWith('\n')).toBe(true);
    expect(JSON.parse(out[0]!)).toEqual({
      level: 'INFO', message: 'request', timestamp: '2026-05-06T07:08:09.010Z', service: 'device-user-service',
      sampling_rate: 0, xray_trace_id: '1-abc-def', route: 'GET /user', status: 200, latencyMs: 1.5, requestId: 'r-1',
    });
  });

  it('drops lines below the configured level and sends warnings and errors to stderr', async () => {
    const { logger, out, err } = await loadLogger('WARN');

    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');

    expect(out).toEqual([]);
    expect(err.map((line) => JSON.parse(line).level)).toEqual(['WARN', 'ERROR']);
    expect(logger.getLevelName()).toBe('WARN');
  });

  it('serializes an error with its name, message, location and cause', async () => {
    const { logger, err } = await loadLogger('INFO');

    // Made in a named function: its frame is the location (an anonymous test body has none to name,
    // as under Stryker's runner, where vitest's own caller frame is anonymous too).
    const failingStep = () => new TypeError('outer', { cause: new RangeError('inner') });
    logger.error('Unhandled error', { error: failingStep() });

    const { error } = JSON.parse(err[0]!);
    expect(error).toMatchObject({ name: 'TypeError', message: 'outer', cause: { name: 'RangeError', message: 'inner' } });
    expect(error.location).toMatch(/log\.test\.ts:\d+$/); // first named stack frame, as Powertools reports it
    expect(error.stack).toContain('TypeError: outer');
  });

  it('is silent at SILENT', async () => {
    const { logger, out, err } = await loadLogger('SILENT');

    logger.error('e');

    expect([...out, ...err]).toEqual([]);
  });
});

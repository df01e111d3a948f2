import { LOG_ENV, optionalEnv } from '#shared/config';

/**
 * The one structured (JSON) logger. Callers log facts, never request bodies, headers, tokens,
 * codes, secrets or passwords.
 *
 * Every line has the shape Powertools for AWS Lambda's logger gives it, so log queries and alarms
 * do not depend on which one wrote it: `level`, `message`, `timestamp`, `service`, `sampling_rate`,
 * `xray_trace_id`, then the attributes (undefined, null and empty strings left out); an Error, at
 * any depth, becomes `{ name, location, message, stack, cause }`. INFO goes to stdout, WARN and
 * ERROR to stderr. The level is AWS_LAMBDA_LOG_LEVEL (Lambda's advanced logging controls) when
 * valid, else POWERTOOLS_LOG_LEVEL or LOG_LEVEL, else INFO; SILENT mutes everything;
 * POWERTOOLS_DEV pretty-prints. Timestamps are UTC, as Lambda runs.
 *
 * Written out rather than imported because loading and constructing Powertools' logger cost about
 * 10 ms of CPU per cold start (6 % of a resource function's) and formatting a line through it tens
 * of microseconds per request; this file does the same in a few (see bench/RESULTS.md).
 */
export interface Logger {
  debug(message: string, attributes?: Record<string, unknown>): void;
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
  error(message: string, attributes?: Record<string, unknown>): void;
  /** The level in force, e.g. `INFO` (as Powertools' `getLevelName`). */
  getLevelName(): string;
}

const SERVICE = 'device-user-service';
const THRESHOLDS = { TRACE: 6, DEBUG: 8, INFO: 12, WARN: 16, ERROR: 20, CRITICAL: 24, SILENT: 28 } as const;
type LevelName = keyof typeof THRESHOLDS;

const levelFrom = (value: string | undefined): LevelName | undefined => {
  const name = value?.toUpperCase() === 'FATAL' ? 'CRITICAL' : value?.toUpperCase();
  return name !== undefined && Object.hasOwn(THRESHOLDS, name) ? (name as LevelName) : undefined;
};
const levelName: LevelName = levelFrom(optionalEnv(LOG_ENV.lambdaLevel)) ?? levelFrom(optionalEnv(LOG_ENV.level))
  ?? levelFrom(optionalEnv(LOG_ENV.fallbackLevel)) ?? 'INFO';
const threshold = THRESHOLDS[levelName];
const devMode = /^(1|true|yes|on)$/i.test(optionalEnv(LOG_ENV.dev)?.trim() ?? '');
const sampleRate = Number(optionalEnv(LOG_ENV.sampleRate) ?? 0);
const samplingRate = sampleRate >= 0 && sampleRate <= 1 ? sampleRate : 0;

function xrayTraceId(): string | undefined {
  const header = optionalEnv(LOG_ENV.traceHeader);
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [key, value] = part.split('=');
    if (key?.trim() === 'Root') return value?.trim();
  }
  return undefined;
}

function codeLocation(stack: string | undefined): string {
  for (const line of stack?.split('\n') ?? []) {
    const match = /\(([^()]*?):(\d+?):(\d+?)\)\\?$/.exec(line);
    if (match) return `${match[1]}:${Number(match[2])}`;
  }
  return '';
}

function formatError(error: Error): Record<string, unknown> {
  const { name, message, stack, cause } = error;
  const formatted: Record<string, unknown> = {
    name,
    location: codeLocation(stack),
    message,
    stack: devMode && typeof stack === 'string' ? stack.split('\n') : stack,
    cause: cause instanceof Error ? formatError(cause) : cause,
  };
  for (const key in error) {
    if (!['name', 'message', 'stack', 'cause'].includes(key)) formatted[key] = (error as unknown as Record<string, unknown>)[key];
  }
  return formatted;
}

/** Errors and bigints serialize as Powertools does; a circular reference is dropped. */
function replacer(): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key, value) {
    const replaced = value instanceof Error ? formatError(value) : value;
    if (typeof replaced === 'bigint') return replaced.toString();
    if (typeof replaced === 'object' && replaced !== null) {
      while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
      if (ancestors.includes(replaced)) return undefined;
      ancestors.push(replaced);
    }
    return replaced;
  };
}

function write(level: Exclude<LevelName, 'TRACE' | 'CRITICAL' | 'SILENT'>, message: string, attributes: Record<string, unknown> = {}): void {
  if (THRESHOLDS[level] < threshold) return;
  const item: Record<string, unknown> = {};
  const base = { level, message, timestamp: new Date().toISOString(), service: SERVICE, sampling_rate: samplingRate, xray_trace_id: xrayTraceId() };
  for (const [key, value] of Object.entries({ ...base, ...attributes })) {
    if (value !== undefined && value !== null && value !== '') item[key] = value;
  }
  const line = `${JSON.stringify(item, replacer(), devMode ? 4 : 0)}\n`;
  (level === 'WARN' || level === 'ERROR' ? process.stderr : process.stdout).write(line);
}

export const logger: Logger = {
  debug: (message, attributes) => write('DEBUG', message, attributes),
  info: (message, attributes) => write('INFO', message, attributes),
  warn: (message, attributes) => write('WARN', message, attributes),
  error: (message, attributes) => write('ERROR', message, attributes),
  getLevelName: () => levelName,
};

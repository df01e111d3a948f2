import { METRICS_ENV, optionalEnv } from '#shared/config';
import { logger } from '#shared/log';

/**
 * The service's business metrics, written as CloudWatch Embedded Metric Format (EMF): one JSON log
 * line per event, from which CloudWatch Logs extracts the metric; no API call, no extra permission.
 * The dashboard and the alarms (infra/constructs/monitoring.ts) read them by these names.
 *
 * Written out rather than imported: aws-embedded-metrics 4.2.1, bundled with the stack's esbuild
 * settings, adds 38 KB and about 7 ms to a cold start (median of 25 fresh processes: import 8.2 ms
 * against 1.1 ms for this shape written by hand), as much as the logger this file sits beside
 * was written to avoid. The shape is the one of "Specification: Embedded metric format"
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
 * a root object (no text before or after it, one line) with `_aws: { Timestamp, CloudWatchMetrics:
 * [{ Namespace, Dimensions, Metrics }] }`, and root members holding each dimension's value (a
 * string) and each metric's value (a number). It goes to stdout with `process.stdout.write`, as the
 * logger's lines do, so Lambda's JSON log format does not wrap it.
 */
export const METRIC = {
  /** An access token handed out by the token endpoint (code exchange or refresh). */
  tokensIssued: 'TokensIssued',
  /** A rotated refresh token presented again after its successor was used (or an older one): its family is revoked. */
  refreshTokenReuse: 'RefreshTokenReuse',
  /** Token families revoked: RFC 7009, reuse, code replay, an application's access withdrawn or deleted. */
  grantsRevoked: 'GrantsRevoked',
  /** A sign-in with an unknown address or a wrong password. */
  loginFailures: 'LoginFailures',
  /** A sign-in refused (429) because of earlier failures. */
  loginThrottled: 'LoginThrottled',
  /** An account created (not yet confirmed). */
  signUps: 'SignUps',
  /** A message accepted by Amazon SES. */
  emailsSent: 'EmailsSent',
  /** A KMS Sign or GetPublicKey that failed (KMS publishes no error metric per key). */
  kmsErrors: 'KmsErrors',
} as const;
export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/** The namespace when none is configured (local runs); the stack sets one per stack. */
export const DEFAULT_METRICS_NAMESPACE = 'DeviceUserService';
/** The one dimension of every business metric, and its value. */
export const METRIC_DIMENSION = { name: 'service', value: 'device-user-service' } as const;

/** One EMF document: `value` of the Count metric `name`, at `now`. */
export function emfLine(namespace: string, name: MetricName, value: number, now: number): string {
  return `${JSON.stringify({
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [{ Namespace: namespace, Dimensions: [[METRIC_DIMENSION.name]], Metrics: [{ Name: name, Unit: 'Count' }] }],
    },
    level: 'INFO',
    message: 'metric',
    [METRIC_DIMENSION.name]: METRIC_DIMENSION.value,
    [name]: value,
  })}\n`;
}

const namespace = optionalEnv(METRICS_ENV.namespace) ?? DEFAULT_METRICS_NAMESPACE;

/**
 * Counts `value` occurrences of a business event. Written whatever the log level (alarms must not
 * depend on it), except SILENT, which mutes everything (the tests).
 */
export function countMetric(name: MetricName, value = 1): void {
  if (value <= 0 || logger.getLevelName() === 'SILENT') return;
  process.stdout.write(emfLine(namespace, name, value, Date.now()));
}

import { Duration } from 'aws-cdk-lib';
import { MathExpression, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';

/** The period of the service's alarms and graphs. */
export const FIVE_MINUTES = Duration.minutes(5);

/**
 * The sum of `metrics` at each point in time. FILL gives a series without a data point 0 there: in
 * `a + b`, a point missing from either series is missing from the result (a throttle of one
 * operation alone would never be seen), and these metrics are published only when something happened.
 */
export function sumOf(metrics: Record<string, IMetric>, label: string): MathExpression {
  return new MathExpression({
    expression: `SUM([${Object.keys(metrics).map((id) => `FILL(${id}, 0)`).join(', ')}])`,
    usingMetrics: metrics,
    label,
    period: FIVE_MINUTES,
  });
}

/** `items` in consecutive groups of at most `size` (a math alarm reads at most 10 metrics). */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

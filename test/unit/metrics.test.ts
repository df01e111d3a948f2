import { afterEach, describe, expect, it, vi } from 'vitest';
import { emfLine, METRIC, METRIC_DIMENSION } from '#shared/metrics';

// The rules of "Specification: Embedded metric format" (Amazon CloudWatch User Guide,
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html)
// that a document must meet for CloudWatch Logs to extract its metrics, checked independently of the writer.
const UNITS = new Set(['Seconds', 'Microseconds', 'Milliseconds', 'Bytes', 'Kilobytes', 'Megabytes', 'Gigabytes', 'Terabytes', 'Bits',
  'Kilobits', 'Megabits', 'Gigabits', 'Terabits', 'Percent', 'Count', 'Bytes/Second', 'Kilobytes/Second', 'Megabytes/Second',
  'Gigabytes/Second', 'Terabytes/Second', 'Bits/Second', 'Kilobits/Second', 'Megabits/Second', 'Gigabits/Second', 'Terabits/Second',
  'Count/Second', 'None']);

function specViolations(line: string): string[] {
  const problems: string[] = [];
  // The log event is the JSON object alone, with nothing before or after it; one line.
  if (!line.endsWith('\n') || line.slice(0, -1).includes('\n')) problems.push('not one line');
  let root: any;
  try {
    root = JSON.parse(line);
  } catch {
    return ['not JSON'];
  }
  if (typeof root !== 'object' || root === null || Array.isArray(root)) return ['root is not an object'];
  if (Buffer.byteLength(line) > 1024 * 1024) problems.push('larger than a log event may be');
  const aws = root._aws;
  if (typeof aws !== 'object' || aws === null) return [...problems, 'no _aws metadata object'];
  // Timestamp: REQUIRED, milliseconds since the epoch.
  if (!Number.isInteger(aws.Timestamp) || aws.Timestamp < 1e12) problems.push('Timestamp is not epoch milliseconds');
  // CloudWatchMetrics: REQUIRED array of MetricDirective.
  if (!Array.isArray(aws.CloudWatchMetrics) || aws.CloudWatchMetrics.length === 0) return [...problems, 'no CloudWatchMetrics'];
  for (const directive of aws.CloudWatchMetrics) {
    if (typeof directive.Namespace !== 'string' || directive.Namespace.length < 1 || directive.Namespace.length > 255) problems.push('bad Namespace');
    // Dimensions: REQUIRED array of DimensionSets, each at most 30 references to root members whose values are strings.
    if (!Array.isArray(directive.Dimensions)) problems.push('no Dimensions');
    for (const set of directive.Dimensions ?? []) {
      if (!Array.isArray(set) || set.length > 30) problems.push('bad DimensionSet');
      for (const key of set) if (typeof root[key] !== 'string' || root[key].length === 0 || root[key].length > 1024) problems.push(`dimension ${key} has no string value`);
    }
    // Metrics: REQUIRED, at most 100 MetricDefinitions, each naming a root member whose value is a number (or up to 100 numbers).
    if (!Array.isArray(directive.Metrics) || directive.Metrics.length === 0 || directive.Metrics.length > 100) problems.push('bad Metrics');
    for (const definition of directive.Metrics ?? []) {
      if (typeof definition.Name !== 'string' || definition.Name.length === 0 || definition.Name.length > 1024) problems.push('bad metric Name');
      const value = root[definition.Name];
      const numbers = Array.isArray(value) ? value : [value];
      if (numbers.length === 0 || numbers.length > 100 || !numbers.every((n) => typeof n === 'number' && Number.isFinite(n))) problems.push(`metric ${definition.Name} has no number value`);
      if (definition.Unit !== undefined && !UNITS.has(definition.Unit)) problems.push(`unit ${definition.Unit} is not a CloudWatch unit`);
      if (definition.StorageResolution !== undefined && ![1, 60].includes(definition.StorageResolution)) problems.push('bad StorageResolution');
    }
    const unknown = Object.keys(directive).filter((k) => !['Namespace', 'Dimensions', 'Metrics'].includes(k));
    if (unknown.length > 0) problems.push(`MetricDirective has members the specification does not define: ${unknown.join(', ')}`);
  }
  return problems;
}

describe('business metrics in Embedded Metric Format', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it.each(Object.values(METRIC))('writes %s as a document the EMF specification accepts', (name) => {
    const line = emfLine('DeviceUserService/Prod', name, 3, Date.UTC(2026, 4, 6, 7, 8, 9, 10));
    expect(specViolations(line)).toEqual([]);
    expect(JSON.parse(line)).toEqual({
      _aws: {
        Timestamp: Date.UTC(2026, 4, 6, 7, 8, 9, 10),
        CloudWatchMetrics: [{ Namespace: 'DeviceUserService/Prod', Dimensions: [['service']], Metrics: [{ Name: name, Unit: 'Count' }] }],
      },
      level: 'INFO', message: 'metric', service: METRIC_DIMENSION.value, [name]: 3,
    });
  });

  it('the checker refuses documents the specification does not accept (it can fail)', () => {
    const good = JSON.parse(emfLine('N', METRIC.signUps, 1, Date.now()));
    const broken = (change: (doc: any) => void) => {
      const doc = structuredClone(good);
      change(doc);
      return specViolations(`${JSON.stringify(doc)}\n`);
    };
    expect(broken((d) => { d._aws.Timestamp = new Date().toISOString(); })).not.toEqual([]);
    expect(broken((d) => { delete d.service; })).not.toEqual([]);
    expect(broken((d) => { d.SignUps = '1'; })).not.toEqual([]);
    expect(broken((d) => { d._aws.CloudWatchMetrics[0].Metrics[0].Unit = 'Things'; })).not.toEqual([]);
    expect(specViolations(`metric ${JSON.stringify(good)}\n`)).not.toEqual([]);
  });

  /** shared/metrics.ts loaded afresh with this log level and namespace, stdout captured. */
  async function load(level: string, namespace?: string) {
    vi.resetModules();
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', level);
    vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', '');
    vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', namespace ?? '');
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { out.push(String(chunk)); return true; });
    return { out, metrics: await import('#shared/metrics') };
  }

  it('counts an event on stdout in the configured namespace, whatever the log level short of SILENT', async () => {
    for (const level of ['DEBUG', 'INFO', 'ERROR']) {
      const { out, metrics } = await load(level, 'DeviceUserService/Test');
      metrics.countMetric(metrics.METRIC.tokensIssued);
      metrics.countMetric(metrics.METRIC.grantsRevoked, 0);
      expect(out, level).toHaveLength(1);
      expect(specViolations(out[0]!)).toEqual([]);
      expect(JSON.parse(out[0]!)).toMatchObject({ TokensIssued: 1, _aws: { CloudWatchMetrics: [{ Namespace: 'DeviceUserService/Test' }] } });
    }
    const silent = await load('SILENT');
    silent.metrics.countMetric(silent.metrics.METRIC.tokensIssued);
    expect(silent.out).toEqual([]);
    const unnamed = await load('INFO');
    unnamed.metrics.countMetric(unnamed.metrics.METRIC.signUps, 2);
    expect(JSON.parse(unnamed.out[0]!)).toMatchObject({ SignUps: 2, _aws: { CloudWatchMetrics: [{ Namespace: 'DeviceUserService' }] } });
  });

  it('counts a failed KMS call in KmsErrors, transient or not', async () => {
    const { out } = await load('INFO');
    const { createKmsSigner } = await import('#shared/keys/kms-signer');
    const failing = (name: string) => ({ send: async () => { throw Object.assign(new Error(name), { name }); } });
    await expect(createKmsSigner(failing('ThrottlingException') as never, 'key-1').sign(new Uint8Array([1]))).rejects.toThrow();
    await expect(createKmsSigner(failing('AccessDeniedException') as never, 'key-1').publicJwk()).rejects.toThrow();
    expect(out.map((line) => JSON.parse(line).KmsErrors)).toEqual([1, 1]);
  });
});

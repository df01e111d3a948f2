import type { ReportOutcome } from '#shared/data/shadow-repo';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import { parseShadowReport, type ShadowReportProblem } from '#shared/domain/shadow';
import type { Logger } from '#shared/log';

/** What became of one documents message: its effect on the device, or why it was dropped before any write. */
export type ReportResult = ReportOutcome | 'unknown-device' | ShadowReportProblem;

/** The repository operations recordReport uses (its function's grants: functions/needs.ts). */
export const REPORT_USES = { devices: ['findDeviceOwner'], shadowReports: ['applyReport'] } as const satisfies UsesDeclaration;

export type ReportDeps = Uses<typeof REPORT_USES> & { logger: Logger };

/**
 * Records a device's report from its shadow (the reports rule's documents message) on the device
 * item: validated as the API validates (parseShadowReport), the device's owner by its id (one Query
 * of GSI1), then one conditional write ordered by the shadow's version (ShadowRepo.applyReport),
 * which the table's stream turns into `device.updated` webhooks. Everything but `applied` writes
 * nothing and is logged on one line (device id when the thing is one, the reason): malformed, wrong
 * types, the cloud's own desired update, an unknown device, a stale or repeated report. Only a
 * storage failure throws (the invocation is then retried).
 */
export async function recordReport(input: unknown, deps: ReportDeps): Promise<ReportResult> {
  const parsed = parseShadowReport(input);
  if ('problem' in parsed) {
    const thing = typeof (input as { thingName?: unknown } | null)?.thingName === 'string' ? String((input as { thingName: string }).thingName).slice(0, 64) : undefined;
    deps.logger[parsed.problem === 'unchanged' ? 'info' : 'warn']('shadow report dropped', { thing, reason: parsed.problem });
    return parsed.problem;
  }
  const { report } = parsed;
  const facts = { deviceId: report.deviceId, shadowVersion: report.shadowVersion, fields: Object.keys(report.state) };
  const owner = await deps.devices.findDeviceOwner(report.deviceId);
  if (!owner) {
    deps.logger.warn('shadow report dropped', { ...facts, reason: 'unknown-device' });
    return 'unknown-device';
  }
  const outcome = await deps.shadowReports.applyReport(owner, report);
  if (outcome === 'applied') deps.logger.info('shadow report recorded', facts);
  else deps.logger.info('shadow report dropped', { ...facts, reason: outcome });
  return outcome;
}

import { runAsFunction } from '#local/invocation-context';

/** How the local invocations name the device presence topic rule (and test/support/deployed-form.ts the deployed one). */
export const PRESENCE_SOURCE = { api: 'iot', routeKey: 'presence' } as const;

/** How the local invocations name the device reports topic rule (and test/support/deployed-form.ts the deployed one). */
export const REPORTS_SOURCE = { api: 'iot', routeKey: 'shadow-reports' } as const;

/**
 * Runs the reports rule's function on one shadow documents message of `thing`, in this process, as
 * the topic rule's Lambda action does in AWS (`SELECT *, topic(3) AS thingName`: the message with
 * the thing's name), attributed to that rule. Returns what the handler returns.
 */
export function runReportsRule(thing: string, documents: Record<string, unknown>): Promise<{ outcome: string }> {
  return runAsFunction({ fn: 'record-shadow-report', ...REPORTS_SOURCE }, async () => {
    const { handler } = await import('#functions/devices/record-shadow-report');
    return handler({ ...documents, thingName: thing });
  });
}

/**
 * Runs the presence rule's function on one lifecycle event, in this process, as the topic rule's
 * Lambda action does in AWS (the message as the event, `SELECT *`), attributed to that rule so that
 * its AWS calls are checked against the function's role. Returns what the handler returns.
 */
export function runPresenceRule(event: unknown): Promise<{ outcome: string }> {
  return runAsFunction({ fn: 'record-presence', ...PRESENCE_SOURCE }, async () => {
    const { handler } = await import('#functions/devices/record-presence');
    return handler(event);
  });
}

/** How the local invocations name fleet provisioning's pre-provisioning hook (and test/support/deployed-form.ts the deployed one). */
export const PROVISIONING_HOOK_SOURCE = { api: 'iot', routeKey: 'provisioning-hook' } as const;

/**
 * Runs the pre-provisioning hook's function on one device's request, in this process, as IoT Core's
 * fleet provisioning invokes it in AWS (synchronously, before the template's resources are made),
 * attributed to the template so that its AWS calls are checked against the function's role.
 */
export function runProvisioningHook(event: unknown): Promise<{ allowProvisioning: boolean; parameterOverrides?: Record<string, string> }> {
  return runAsFunction({ fn: 'pre-provision-device', ...PROVISIONING_HOOK_SOURCE }, async () => {
    const { handler } = await import('#functions/devices/pre-provision-device');
    return handler(event);
  });
}

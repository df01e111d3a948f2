import { runAsFunction } from '#local/invocation-context';

/** How the local invocations name the device presence topic rule (and test/support/deployed-form.ts the deployed one). */
export const PRESENCE_SOURCE = { api: 'iot', routeKey: 'presence' } as const;
/** How they name the fleet provisioning template's pre-provisioning hook. */
export const PROVISIONING_HOOK_SOURCE = { api: 'iot', routeKey: 'provisioning-hook' } as const;

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

/**
 * Runs the pre-provisioning hook's function on one RegisterThing request, as IoT Core's fleet
 * provisioning does before it creates the thing, attributed to the provisioning template. Returns
 * the hook's answer.
 */
export function runProvisioningHook(request: unknown): Promise<{ allowProvisioning: boolean; parameterOverrides?: Record<string, string> }> {
  return runAsFunction({ fn: 'check-provisioning', ...PROVISIONING_HOOK_SOURCE }, async () => {
    const { handler } = await import('#functions/devices/check-provisioning');
    return handler(request);
  });
}

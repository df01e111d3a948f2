import type { Uses, UsesDeclaration } from '#shared/data/uses';
import { parseProvisioningRequest, THING_NAME_PARAMETER, type ProvisioningAnswer } from '#shared/domain/fleet';
import type { Logger } from '#shared/log';

/** The repository operations checkProvisioning uses (its function's grants: functions/needs.ts). */
export const PRE_PROVISIONING_USES = { serials: ['admitSerial'] } as const satisfies UsesDeclaration;

export type PreProvisioningDeps = Uses<typeof PRE_PROVISIONING_USES> & { logger: Logger; now?: () => Date };

/**
 * The fleet provisioning template's pre-provisioning hook: admits a device's RegisterThing request
 * only for a serial the operator listed and no other certificate has provisioned with, in one
 * conditional write (SerialRepo.admitSerial), and names its thing by the serial's device id. Anything
 * else is refused (`allowProvisioning: false`, which IoT Core answers with a rejection) and logged on
 * one line with the reason and the serial when it is one; a malformed request asks nothing of storage.
 * Only a storage failure throws (IoT Core then refuses the request too: the device may retry).
 */
export async function checkProvisioning(input: unknown, deps: PreProvisioningDeps): Promise<ProvisioningAnswer> {
  const parsed = parseProvisioningRequest(input);
  if ('problem' in parsed) {
    deps.logger.warn('provisioning refused', { reason: parsed.problem });
    return { allowProvisioning: false };
  }
  const { serial, certificateId } = parsed.request;
  const admission = await deps.serials.admitSerial(serial, certificateId, deps.now?.() ?? new Date());
  if (typeof admission === 'string') {
    deps.logger.warn('provisioning refused', { reason: admission === 'unknown' ? 'serial-not-listed' : 'serial-used', serial });
    return { allowProvisioning: false };
  }
  deps.logger.info('provisioning admitted', { serial, deviceId: admission.deviceId });
  return { allowProvisioning: true, parameterOverrides: { [THING_NAME_PARAMETER]: admission.deviceId } };
}

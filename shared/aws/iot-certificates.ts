import { IoTClient, UpdateCertificateCommand } from '@aws-sdk/client-iot';
import { awsClientConfig, observeClient } from '#shared/aws/client-config';

/** What the IoT client sends, so a test can hand a stand-in. */
export type IotSend = Pick<IoTClient, 'send'>;

/**
 * Device certificates on AWS IoT Core: deactivating one (UpdateCertificate to INACTIVE), after which
 * IoT Core refuses the device at its next connection, and ends none that is open (the device
 * reconnects and is refused). The client's endpoint is the SDK's (AWS_ENDPOINT_URL_IOT locally).
 */
export function createIotCertificates(client: IotSend = observeClient(new IoTClient(awsClientConfig()))) {
  return {
    async deactivate(certificateId: string): Promise<void> {
      await client.send(new UpdateCertificateCommand({ certificateId, newStatus: 'INACTIVE' }));
    },
  };
}

let certificates: ReturnType<typeof createIotCertificates> | undefined;
/** Deactivates a certificate with this module's one client (built on first use): what the functions load lazily (shared/runtime.ts). */
export const deactivateCertificate = (certificateId: string): Promise<void> => (certificates ??= createIotCertificates()).deactivate(certificateId);

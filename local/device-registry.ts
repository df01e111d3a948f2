import { AttachPolicyCommand, AttachThingPrincipalCommand, CreateKeysAndCertificateCommand, CreateThingCommand, type IoTClient } from '@aws-sdk/client-iot';
import { createIotCertificates } from '#shared/aws/iot-certificates';

// The IoT identity an operator gives a device (`npm run admin -- provision-device`): on AWS IoT Core,
// or on the local service's registry stand-in (local/iot-registry.ts), which speaks the same protocol
// to the same client, with certificates from the local CA.

/** A device's certificate and private key (PEM), and the certificate's id (IoT Core's certificateId). */
export interface DeviceIdentity {
  certificateId: string;
  certificatePem: string;
  privateKeyPem: string;
}

/** Where devices get their identity, and lose it. */
export interface DeviceRegistry {
  /** A thing named `thingName` (the device id: its MQTT client id), a new active certificate and key, the device policy attached to it, it attached to the thing. */
  provision(thingName: string): Promise<DeviceIdentity>;
  /** The certificate turned INACTIVE: the device can no longer connect. */
  deactivate(certificateId: string): Promise<void>;
}

/** The registry of IoT Core (or of its stand-in) through `client`, attaching `policyName` (the stack's DevicePolicyName output). */
export function iotDeviceRegistry(client: IoTClient, policyName: string): DeviceRegistry {
  const certificates = createIotCertificates(client);
  return {
    async provision(thingName) {
      await client.send(new CreateThingCommand({ thingName }));
      const created = await client.send(new CreateKeysAndCertificateCommand({ setAsActive: true }));
      const { certificateArn, certificateId, certificatePem, keyPair } = created;
      if (!certificateArn || !certificateId || !certificatePem || !keyPair?.PrivateKey) throw new Error('CreateKeysAndCertificate answered without the certificate or its key');
      try {
        await client.send(new AttachPolicyCommand({ policyName, target: certificateArn }));
        await client.send(new AttachThingPrincipalCommand({ thingName, principal: certificateArn }));
      } catch (error) {
        // A certificate left half set up must not stay active.
        await certificates.deactivate(certificateId).catch(() => undefined);
        throw error;
      }
      return { certificateId, certificatePem, privateKeyPem: keyPair.PrivateKey };
    },
    deactivate: (certificateId) => certificates.deactivate(certificateId),
  };
}

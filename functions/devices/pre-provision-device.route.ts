import { defineEndpoint } from '#shared/declaration';
import { preProvision } from '#functions/needs';

export default defineEndpoint({
  eventSource: 'iot-provisioning-hook',
  // shared/devices/fleet-provisioning.ts: the serial read, then taken with the certificate in one transaction.
  needs: { table: preProvision },
  sample: {
    status: 200,
    // A serial that is not on the allow-list: looked up, refused, nothing written.
    make: () => ({
      event: {
        claimCertificateId: '0'.repeat(64), certificateId: '1'.repeat(64), certificatePem: '', templateArn: 'arn:aws:iot:us-east-1:000000000000:provisioningtemplate/devices',
        clientId: 'factory-claim', parameters: { SerialNumber: 'SN-NOT-ALLOWED' },
      },
      description: 'a registration whose serial is not on the allow-list: refused (allowProvisioning false), nothing written',
    }),
  },
});

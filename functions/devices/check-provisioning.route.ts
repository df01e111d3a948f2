import { defineEndpoint } from '#shared/declaration';
import { checkProvisioning } from '#functions/needs';

export default defineEndpoint({
  eventSource: 'iot-provisioning-hook',
  // shared/fleet/pre-provisioning.ts: one conditional write that admits the serial's first certificate.
  needs: { table: checkProvisioning },
  sample: {
    status: 200,
    // A serial nobody listed: refused after the one conditional write, nothing written.
    make: () => ({
      event: {
        claimCertificateId: '0'.repeat(64), certificateId: '1'.repeat(64), certificatePem: '',
        templateArn: 'arn:aws:iot:us-east-1:000000000000:provisioningtemplate/devices', clientId: 'factory-0001',
        parameters: { SerialNumber: 'SAMPLE-NOT-LISTED' },
      },
      description: 'a RegisterThing request for a serial that is not listed: refused (allowProvisioning false), nothing written',
    }),
  },
});

import { defineEndpoint } from '#shared/declaration';
import { signingKeys } from '#functions/needs';

export default defineEndpoint({
  schedule: 'rate(1 hour)',
  needs: { table: [signingKeys.getSchedule, signingKeys.saveSchedule], signingKey: 'rotate' },
  sample: {
    status: 200,
    // A report only: a rotation step would change the running service's keys, which a sample must not.
    make: () => ({ event: { mode: 'report' }, description: 'the signing-key rotation in report mode: the keys and their phases, nothing changed' }),
  },
});

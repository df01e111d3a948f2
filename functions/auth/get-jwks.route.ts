import { step } from '#shared/bench-floor';
import { auth, defineEndpoint } from '#shared/declaration';
import { signingKeys } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/.well-known/jwks.json', 'metadata')],
  needs: { table: [signingKeys.getSchedule], signingKey: 'verify' },
  sample: { status: 200, make: (kit) => kit.page('GET /.well-known/jwks.json') },
  // The floor is a cold start's: the schedule is read then, and once a minute after (warm calls read nothing).
  bench: {
    floor: [step.get('keySchedule')],
    minReason: 'GetItem(signing-key schedule) + the public keys (AWS: one KMS GetPublicKey per key and container)',
  },
});

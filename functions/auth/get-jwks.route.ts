import { auth, defineEndpoint } from '#shared/endpoint';
import { signingKeys } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/.well-known/jwks.json', 'metadata')],
  needs: { table: [signingKeys.getSchedule], signingKey: 'verify' },
  sample: { status: 200, make: (kit) => kit.page('GET /.well-known/jwks.json') },
});

import { auth, defineEndpoint } from '#shared/declaration';

export default defineEndpoint({
  routes: [
    auth('GET', '/.well-known/openid-configuration', 'metadata'),
    auth('GET', '/.well-known/oauth-authorization-server', 'metadata'),
  ],
  needs: {},
  sample: { status: 200, make: (kit) => kit.page('GET /.well-known/openid-configuration') },
  bench: { floor: [], minReason: 'static document' },
});

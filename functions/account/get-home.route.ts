import { auth, defineEndpoint } from '#shared/declaration';

export default defineEndpoint({
  routes: [auth('GET', '/', 'page')],
  needs: {},
  sample: { status: 302, make: (kit) => kit.page('GET /: the account page') },
  bench: { floor: [], minReason: 'a redirect to /account' },
});

import { defineEndpoint } from '#shared/declaration';

export default defineEndpoint({
  routes: [{ api: 'resource', method: 'GET', path: '/openapi.json', throttle: 'metadata' }],
  needs: {},
  sample: { status: 200, make: (kit) => kit.page('GET /openapi.json') },
  bench: { floor: [], minReason: 'static document' },
});

import { defineEndpoint } from '#shared/declaration';

export default defineEndpoint({
  // Reached by the fallback route keys of both APIs (fallbackRouteKeys), not by routes of its own.
  fallback: true,
  needs: {},
  sample: {
    status: 405,
    make: (kit) => kit.page('DELETE /user (the resource API\'s fallback route DELETE /user): 405 with Allow', {
      route: { method: 'DELETE', path: '/user' }, method: 'DELETE',
    }),
  },
  bench: { floor: [], minReason: 'answered from the route table' },
});

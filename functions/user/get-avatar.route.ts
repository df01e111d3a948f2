import { defineEndpoint } from '#shared/declaration';

export default defineEndpoint({
  routes: [{ api: 'resource', method: 'GET', path: '/avatars/{file}', throttle: 'metadata' }],
  needs: {},
  sample: {
    status: 200,
    make: (kit) => kit.page('GET /avatars/{file}: the confirmed demo user’s avatar_url, a generated PNG', {
      pathParameters: { file: `${kit.confirmed.id}.png` },
    }),
  },
});

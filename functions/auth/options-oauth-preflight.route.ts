import { auth, defineEndpoint } from '#shared/declaration';

export default defineEndpoint({
  // The auth API has no CORS configuration (shared/routes.ts API_CORS), so API Gateway sends these
  // preflights to this function, before the `ANY` fallback of the two paths.
  routes: [
    auth('OPTIONS', '/oauth/token', 'metadata'),
    auth('OPTIONS', '/oauth/revoke', 'metadata'),
  ],
  needs: {},
  sample: {
    status: 204,
    make: (kit) => kit.page('OPTIONS /oauth/token, the CORS preflight of a browser application\'s token request', {
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    }),
  },
});

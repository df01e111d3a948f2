import { RENDERER_FILE } from '#shared/assets';
import { defineEndpoint } from '#shared/declaration';

export default defineEndpoint({
  routes: [{ api: 'resource', method: 'GET', path: '/docs', throttle: 'metadata' }],
  // It hashes the renderer script at load, for the page's CSP and integrity.
  assets: [RENDERER_FILE],
  needs: {},
  sample: { status: 200, make: (kit) => kit.page('GET /docs: the API reference page') },
  bench: { floor: [], minReason: 'static page (hashes the renderer file at load)' },
});

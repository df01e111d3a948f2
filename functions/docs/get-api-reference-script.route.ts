import { RENDERER_FILE } from '#shared/assets';
import { rendererScript } from '#shared/api-docs/api-reference';
import { defineEndpoint } from '#shared/declaration';

export default defineEndpoint({
  routes: [{ api: 'resource', method: 'GET', path: '/docs/reference.js', throttle: 'metadata' }],
  assets: [RENDERER_FILE],
  needs: {},
  sample: {
    status: 200,
    make: (kit) => kit.page('GET /docs/reference.js?v=…: the renderer script, as the page asks for it', {
      query: { v: rendererScript().version },
    }),
  },
  // Its package also holds the renderer file (1.1 MB, read at load), which the bundle figure does not count.
  bench: { floor: [], minReason: 'static file' },
});

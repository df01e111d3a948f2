import { WEBAUTHN_BROWSER_FILE } from '#shared/assets';
import { auth, defineEndpoint } from '#shared/declaration';

export default defineEndpoint({
  routes: [auth('GET', '/assets/passkeys.js', 'metadata')],
  assets: [WEBAUTHN_BROWSER_FILE],
  needs: {},
  sample: { status: 200, make: (kit) => kit.page('GET /assets/passkeys.js: the pages’ passkey script') },
  bench: { floor: [], minReason: 'static file' },
});

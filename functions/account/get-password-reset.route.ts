import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/password-reset', 'page')],
  needs: { table: pageReads },
  sample: { status: 200, make: (kit) => kit.page('GET /password-reset: the form') },
  bench: { floor: [], minReason: 'first visit, no session cookie: the form only' },
});

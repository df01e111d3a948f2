import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/signup', 'page')],
  needs: { table: pageReads },
  sample: { status: 200, make: (kit) => kit.page('GET /signup: the sign-up form') },
  bench: { floor: [], minReason: 'first visit, no session cookie: the form only' },
});

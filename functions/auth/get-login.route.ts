import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/login', 'page')],
  needs: { table: pageReads },
  sample: { status: 200, make: (kit) => kit.page('GET /login?return_to=/account, signed out: the sign-in form', { query: { return_to: '/account' } }) },
  bench: { floor: [], minReason: 'first visit, no session cookie: the form only' },
});

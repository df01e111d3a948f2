import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/outbox', 'page')],
  localOnly: true,
  needs: { table: pageReads },
  sample: { status: 200, make: (kit) => kit.page('GET /outbox: the local e-mail') },
  bench: { floor: [], minReason: 'local only: lists the outbox directory; first visit, no session cookie' },
});

import { step } from '#shared/bench-floor';
import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/developer/apps/{client_id}/delete', 'page')],
  needs: { table: pageReads },
  sample: {
    status: 200,
    make: async (kit) => kit.page('GET /developer/apps/{client_id}/delete: the confirmation asked before deleting a scratch application', {
      pathParameters: { client_id: await kit.scratchApp() }, cookies: [await kit.session()],
    }),
  },
  bench: { floor: [step.batchGet('session', 'user', 'client')], minReason: 'BatchGetItem(session, user, client)' },
});

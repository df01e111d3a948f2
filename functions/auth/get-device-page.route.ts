import { step } from '#shared/bench-floor';
import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/device', 'page')],
  needs: { table: pageReads },
  sample: {
    status: 200,
    make: async (kit) => kit.page('GET /device?user_code=BCDF-GHJK, signed in: the code form, pre-filled', {
      query: { user_code: 'BCDF-GHJK' }, cookies: [await kit.session()],
    }),
  },
  bench: {
    floor: [step.batchGet('session', 'user')],
    minReason: 'BatchGetItem(session, user): the code form, pre-filled from the query; nothing is looked up before the user submits',
  },
});

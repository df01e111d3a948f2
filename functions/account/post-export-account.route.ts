import { auth, defineEndpoint } from '#shared/declaration';
import { exportAccount, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/account/export', 'page')],
  needs: { table: [...pageReads, ...exportAccount] },
  sample: {
    status: 200,
    make: async (kit) => kit.page('POST /account/export, signed in: the demo user’s data as one JSON file', {
      form: { account: kit.confirmed.id }, cookies: [await kit.session()],
    }),
  },
});

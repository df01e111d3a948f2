import { auth, defineEndpoint } from '#shared/endpoint';
import { links, pageReads, users } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/password-reset/confirm', 'page')],
  needs: { table: [...pageReads, links.readLink, users.getUserRecord] },
  sample: {
    status: 200,
    make: async (kit) => kit.page('GET /password-reset/confirm with a live link: the new-password form', {
      query: { token: await kit.link('reset-password', kit.confirmed) },
    }),
  },
});

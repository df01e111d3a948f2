import { auth, defineEndpoint } from '#shared/declaration';
import { sessions } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/logout', 'page')],
  needs: { table: [sessions.deleteSession] },
  sample: { status: 303, make: async (kit) => kit.page('POST /logout, signed in: the session ends', { form: {}, cookies: [await kit.session()] }) },
});

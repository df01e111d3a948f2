import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads, sessions } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/account/security/sessions/end-others', 'page')],
  needs: { table: [...pageReads, sessions.sessionKeysOf, sessions.endSessions] },
  sample: {
    // Signed in, it would sign the demo user's other browsers out: signed out, it goes to the login form.
    status: 303,
    make: (kit) => kit.page('POST /account/security/sessions/end-others signed out: to the login form (303), nothing ended', { form: {} }),
  },
});

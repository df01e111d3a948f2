import { auth, defineEndpoint } from '#shared/declaration';
import { factors, pageReads, users } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/login/second-factor', 'page')],
  needs: { table: [...pageReads, factors.pendingSignInRead, users.signInProfileRead] },
  sample: {
    status: 302,
    make: (kit) => kit.page('GET /login/second-factor without a pending sign-in: back to the login form', { query: { return_to: '/account' } }),
  },
});

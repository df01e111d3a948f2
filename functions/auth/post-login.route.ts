import { auth, defineEndpoint } from '#shared/declaration';
import { SIGN_IN_ALERT_ENTRY } from '#shared/accounts/sign-in-alert';
import { attemptLogin } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/login', 'login')],
  // A browser new to the account: an alert to its owner, by mail from a module loaded on first use.
  lazyModules: [SIGN_IN_ALERT_ENTRY],
  needs: { sendsMail: true, table: attemptLogin },
  sample: {
    status: 303,
    make: (kit) => kit.page('POST /login with the confirmed demo user’s password: a session and back to /account', {
      form: { email: kit.confirmed.email, password: kit.confirmed.password, return_to: '/account' },
    }),
  },
});

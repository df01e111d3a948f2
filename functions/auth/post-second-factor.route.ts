import { auth, defineEndpoint } from '#shared/declaration';
import { SIGN_IN_ALERT_ENTRY } from '#shared/accounts/sign-in-alert';
import { completeSignIn } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/login/second-factor', 'login')],
  // A browser new to the account: an alert to its owner, by mail from a module loaded on first use.
  lazyModules: [SIGN_IN_ALERT_ENTRY],
  needs: { sendsMail: true, table: completeSignIn },
  sample: {
    status: 400,
    make: (kit) => kit.page('POST /login/second-factor without a pending sign-in: the page that says to sign in again (400)', {
      form: { code: '123456', return_to: '/account' },
    }),
  },
});

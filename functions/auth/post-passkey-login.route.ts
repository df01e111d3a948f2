import { auth, defineEndpoint } from '#shared/endpoint';
import { SIGN_IN_ALERT_ENTRY } from '#shared/accounts/sign-in-alert';
import { signInWithPasskey } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/login/passkey', 'login')],
  // A browser new to the account: an alert to its owner, by mail from a module loaded on first use.
  lazyModules: [SIGN_IN_ALERT_ENTRY],
  needs: { sendsMail: true, table: signInWithPasskey },
  sample: {
    status: 401,
    make: (kit) => kit.page('POST /login/passkey with no passkey answer: the sign-in page with the reason (401)', { form: { response: '{}', return_to: '/account' } }),
  },
});

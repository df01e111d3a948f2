import { auth, defineEndpoint } from '#shared/declaration';
import { PASSKEY_VERIFY_ENTRY } from '#shared/accounts/passkeys';
import { SIGN_IN_ALERT_ENTRY } from '#shared/accounts/sign-in-alert';
import { signInWithPasskey } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/login/passkey', 'login')],
  // A browser new to the account: an alert to its owner, by mail from a module loaded on first use.
  lazyModules: [SIGN_IN_ALERT_ENTRY, PASSKEY_VERIFY_ENTRY],
  needs: { sendsMail: true, table: signInWithPasskey },
  sample: {
    status: 400,
    make: (kit) => kit.page('POST /login/passkey without the browser’s answer (no JavaScript): the sign-in page saying what it needs (400)', {
      form: { response: '', return_to: '/account' },
    }),
  },
});

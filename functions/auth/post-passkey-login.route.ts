import { auth, defineEndpoint } from '#shared/endpoint';
import { signInWithPasskey } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/login/passkey', 'login')],
  needs: { table: signInWithPasskey },
  sample: {
    status: 401,
    make: (kit) => kit.page('POST /login/passkey with no passkey answer: the sign-in page with the reason (401)', { form: { response: '{}', return_to: '/account' } }),
  },
});

import { auth, defineEndpoint } from '#shared/endpoint';
import { attemptLogin } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/login', 'login')],
  needs: { table: attemptLogin },
  sample: {
    status: 303,
    make: (kit) => kit.page('POST /login with the confirmed demo user’s password: a session and back to /account', {
      form: { email: kit.confirmed.email, password: kit.confirmed.password, return_to: '/account' },
    }),
  },
});

import { auth, defineEndpoint } from '#shared/endpoint';
import { completeSignIn } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/login/second-factor', 'login')],
  needs: { table: completeSignIn },
  sample: {
    status: 400,
    make: (kit) => kit.page('POST /login/second-factor without a pending sign-in: the page that says to sign in again (400)', {
      form: { code: '123456', return_to: '/account' },
    }),
  },
});

import { auth, defineEndpoint } from '#shared/endpoint';
import { sessions, throttle, users } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/login', 'login')],
  needs: {
    table: [
      throttle.recordsRead, users.userIdOfEmailRead, throttle.knownBrowserRead, throttle.reserveKnownBrowser, throttle.reserve, users.getUserRecord,
      sessions.createSession, throttle.newKnownBrowser, throttle.forgetKnownBrowserItem, throttle.creditItems,
    ],
  },
  sample: {
    status: 303,
    make: (kit) => kit.page('POST /login with the confirmed demo user’s password: a session and back to /account', {
      form: { email: kit.confirmed.email, password: kit.confirmed.password, return_to: '/account' },
    }),
  },
});

import { auth, defineEndpoint } from '#shared/endpoint';
import { factors, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/account/security/totp', 'page')],
  needs: { table: [...pageReads, factors.totpEnrolmentRead, factors.enrolTotp] },
  sample: {
    // No enrolment waits for the demo user: sent on to a new one, and two-step sign-in stays off.
    status: 303,
    make: async (kit) => kit.page('POST /account/security/totp with no enrolment waiting: on to GET /account/security/totp', {
      form: { code: '123456' }, cookies: [await kit.session()],
    }),
  },
});

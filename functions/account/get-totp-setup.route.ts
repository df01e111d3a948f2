import { auth, defineEndpoint } from '#shared/endpoint';
import { factors, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/account/security/totp', 'page')],
  needs: { table: [...pageReads, factors.factorsRead, factors.totpEnrolmentRead, factors.startTotpEnrolment] },
  sample: {
    status: 200,
    make: async (kit) => kit.page('GET /account/security/totp, signed in: the QR code of a new enrolment (which expires unused)', { cookies: [await kit.session()] }),
  },
});

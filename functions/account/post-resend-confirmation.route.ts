import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads, sendConfirmation } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/confirm-email/resend', 'mail')],
  needs: { table: [...pageReads, ...sendConfirmation], sendsMail: true },
  sample: {
    status: 303,
    make: async (kit) => kit.page('POST /confirm-email/resend as the unconfirmed demo user: a mail in the outbox', {
      form: {}, cookies: [await kit.session(kit.unconfirmed)],
    }),
  },
});

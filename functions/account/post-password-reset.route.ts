import { auth, defineEndpoint } from '#shared/declaration';
import { requestPasswordReset } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/password-reset', 'mail')],
  needs: { table: requestPasswordReset, sendsMail: true },
  sample: {
    status: 303,
    make: (kit) => kit.page('POST /password-reset for the confirmed demo user: a mail in the outbox', { form: { email: kit.confirmed.email } }),
  },
});

import { PASSWORD_STRENGTH_ENTRY } from '#shared/domain/password-policy';
import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads, signUp } from '#functions/needs';

const SIGNUP_EMAIL = 'sample.signup@example.com';

export default defineEndpoint({
  routes: [auth('POST', '/signup', 'mail')],
  lazyModules: [PASSWORD_STRENGTH_ENTRY],
  needs: { table: [...pageReads, ...signUp], sendsMail: true },
  sample: {
    status: 303,
    make: (kit) => kit.page(`POST /signup for ${SIGNUP_EMAIL}: the account (once) and a mail in the outbox`, {
      form: { firstname: 'Sam', lastname: 'Sample', email: SIGNUP_EMAIL, password: 'a sample pass phrase', gender: '0' },
    }),
  },
});

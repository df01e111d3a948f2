import { PASSWORD_STRENGTH_ENTRY } from '#shared/domain/password-policy';
import { auth, defineEndpoint } from '#shared/declaration';
import { randomToken } from '#shared/secrets';
import { pageReads, setNewPassword } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/password-reset/confirm', 'page')],
  lazyModules: [PASSWORD_STRENGTH_ENTRY],
  needs: {
    table: [...pageReads, ...setNewPassword],
  },
  sample: {
    // The expired-link page: a live link would change a demo password, so a used-up one gets the page's refusal.
    status: 400,
    make: (kit) => kit.page('POST /password-reset/confirm with a used-up link: the expired-link page (400)', {
      form: { token: randomToken(), password: 'a sample pass phrase' },
    }),
  },
});

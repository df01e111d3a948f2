import { step } from '#shared/bench-floor';
import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads, resetLinkAccount } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/password-reset/confirm', 'page')],
  needs: { table: [...pageReads, ...resetLinkAccount] },
  sample: {
    status: 200,
    make: async (kit) => kit.page('GET /password-reset/confirm with a live link: the new-password form', {
      query: { token: await kit.link('reset-password', kit.confirmed) },
    }),
  },
  bench: {
    floor: [step.get('link'), step.get('user')],
    minReason: 'GetItem of the link (the form is shown only for a live link) + GetItem(user: the link must be of the account\'s current reset generation)',
  },
});

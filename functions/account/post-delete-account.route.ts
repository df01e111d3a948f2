import { auth, defineEndpoint } from '#shared/declaration';
import { confirmIdentity, deleteAccount, pageReads } from '#functions/needs';

export default defineEndpoint({
  // It sends the farewell e-mail: in the mail class, with the other routes that send account e-mail.
  routes: [auth('POST', '/account/delete', 'mail')],
  // Removes every way to sign in: only for a sign-in of the last minutes (the page middleware checks; a deletion already started is let finish).
  recentSignIn: true,
  needs: { table: [...pageReads, ...confirmIdentity, ...deleteAccount], sendsMail: true },
  sample: {
    // The demo data must stay: the sample asks what the page refuses, a deletion without the password.
    status: 400,
    make: async (kit) => {
      const cookie = await kit.session();
      return kit.page('POST /account/delete without the password: refused, nothing deleted', {
        form: { account: kit.confirmed.id, password: '' }, cookies: [cookie],
      });
    },
  },
});

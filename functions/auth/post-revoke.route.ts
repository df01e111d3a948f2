import { auth, defineEndpoint } from '#shared/declaration';
import { revokeToken } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/oauth/revoke', 'page')],
  needs: { table: revokeToken },
  sample: {
    status: 200,
    make: (kit) => kit.page('POST /oauth/revoke as the demo application, a token never issued: 200 (RFC 7009)', {
      form: { token: 'sample-token-never-issued' }, headers: { authorization: kit.demoClientBasic() },
    }),
  },
});

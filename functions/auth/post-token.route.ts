import { auth, defineEndpoint } from '#shared/declaration';
import { exchangeCode, pollDeviceCode, refresh, signingKeys } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/oauth/token', 'token')],
  needs: { table: [...exchangeCode, ...refresh, ...pollDeviceCode, signingKeys.getSchedule], signingKey: 'sign' },
  sample: {
    // invalid_grant: a code never issued.
    status: 400,
    make: (kit) => kit.page('POST /oauth/token as the demo application with a code never issued: invalid_grant', {
      form: { grant_type: 'authorization_code', code: 'sample-code-never-issued', redirect_uri: kit.demoClient.redirectUri, code_verifier: kit.codeVerifier },
      headers: { authorization: kit.demoClientBasic() },
    }),
  },
});

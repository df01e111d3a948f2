import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads, sessions } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/account/security/sessions/{session_id}/end', 'page')],
  needs: { table: [...pageReads, sessions.endSession] },
  sample: {
    status: 404,
    make: async (kit) => kit.page('POST /account/security/sessions/{session_id}/end of a session the demo user does not have: 404', {
      pathParameters: { session_id: 'A'.repeat(43) }, form: {}, cookies: [await kit.session()],
    }),
  },
});

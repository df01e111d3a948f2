import { auth, defineEndpoint } from '#shared/declaration';
import { appPageReads, rotateAppSecret } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/developer/apps/{client_id}/secret', 'page')],
  needs: { table: [...appPageReads, ...rotateAppSecret] },
  sample: {
    status: 303,
    // The demo application's secret is in the running example app: a scratch application's changes instead.
    make: async (kit) => kit.page('POST /developer/apps/{client_id}/secret, confirmed, on a scratch application: to the page of its new secret', {
      pathParameters: { client_id: await kit.scratchApp() }, form: { confirm: 'yes' }, cookies: [await kit.session()],
    }),
  },
});

import { auth, defineEndpoint } from '#shared/declaration';
import { deleteApplication, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/developer/apps/{client_id}/delete', 'page')],
  needs: {
    table: [...pageReads, ...deleteApplication],
  },
  sample: {
    status: 303,
    make: async (kit) => kit.page('POST /developer/apps/{client_id}/delete on a scratch application, its name typed', {
      pathParameters: { client_id: await kit.scratchApp() }, form: { confirm_name: kit.scratchAppName }, cookies: [await kit.session()],
    }),
  },
});

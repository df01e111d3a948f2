import { auth, defineEndpoint } from '#shared/declaration';
import { clients, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/developer/apps/{client_id}/secret', 'page')],
  needs: { table: [...pageReads, clients.takeSecretReveal] },
  sample: {
    status: 200,
    make: async (kit) => {
      const { clientId, cookie } = await kit.scratchAppWithSecretToShow();
      return kit.page('GET /developer/apps/{client_id}/secret after registering a scratch application: its secret, shown once', {
        pathParameters: { client_id: clientId }, cookies: [await kit.session(), cookie],
      });
    },
  },
});

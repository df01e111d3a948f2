import { auth, defineEndpoint } from '#shared/declaration';
import { clients, pageReads, registerApp } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/developer/apps', 'page')],
  // registerClient: a server application with its secret to show; createClient: a native or browser application, without one.
  needs: { table: [...pageReads, clients.listClientsByDeveloper, ...registerApp] },
  sample: {
    status: 303,
    make: async (kit) => kit.page('POST /developer/apps, signed in: registers an application, then to the page that shows its secret once', {
      form: { name: 'Sample application', description: 'Registered by npm run invoke.', website: 'https://app.example', redirect_uris: 'https://app.example/callback' },
      cookies: [await kit.session()],
    }),
  },
});

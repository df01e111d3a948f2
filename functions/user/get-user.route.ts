import { json, ref } from '#shared/api-docs/openapi';
import { defineEndpoint, resource } from '#shared/declaration';
import { users } from '#functions/needs';

export default defineEndpoint({
  routes: resource('GET', '/user', 'read_user'),
  needs: { table: [users.getUserById] },
  openApi: { summary: "The authorized user's profile", success: { 200: { description: 'The user', ...json(ref('User')) } } },
  sample: { status: 200, make: (kit) => kit.api('GET /user with a token of the confirmed demo user') },
});

import { ownedApp, pathClientId } from '#shared/console/developer';
import { deleteApplication } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';
import { countMetric, METRIC } from '#shared/metrics';
import { deleteAppPage } from '#shared/views/console-pages';

/**
 * POST /developer/apps/{client_id}/delete — deletes the application and everything its users
 * granted it, once the developer typed its name (otherwise the form again, 400, and nothing
 * deleted): one BatchGetItem (session, user, application), then deleteApplication: one Query (its
 * active token families and its users' consents) and one transaction (more only beyond 100 items).
 */
export const handler = pageHandler({
  form: true, csrf: true, session: 'required', reads: { client: pathClientId }, loginReturn: '/developer',
}, async ({ form, signedIn, client, viewer }) => {
  const app = ownedApp(client, signedIn.user.id);
  if ((form.confirm_name ?? '').trim() !== app.name) {
    return deleteAppPage(viewer, app, form.confirm_name ? 'That is not the application’s name. Type it exactly as shown.' : 'Type the application’s name to confirm.', 400);
  }
  countMetric(METRIC.grantsRevoked, await deleteApplication(signedIn.user.id, app.clientId));
  return redirect('/developer', 303);
});

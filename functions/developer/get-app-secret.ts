import { openReveal, ownedApp, pathClientId, revealKeyOf } from '#shared/console/developer';
import { clients } from '#shared/runtime';
import { hashSecret } from '#shared/secrets';
import { secureCookie } from '#shared/pages/session';
import { pageHandler, thisPage } from '#shared/pages/page-handler';
import { secretPage, secretShownPage, webhookSecretPage } from '#shared/views/console-pages';

/**
 * GET /developer/apps/{client_id}/secret — shows the secret a registration or rotation just created
 * (the client secret, or the webhook signing secret), once: the browser's key (a cookie of this path) opens it, and reading deletes it, so a reload or a
 * second tab shows that it was already shown. One BatchGetItem (session, user, application), and one
 * DeleteItem that returns the secret when there is a key.
 */
export const handler = pageHandler({ session: 'required', reads: { client: pathClientId }, loginReturn: thisPage }, async ({ event, signedIn, client, viewer }) => {
  const app = ownedApp(client, signedIn.user.id);
  const { key, clear } = revealKeyOf(event, app.clientId, secureCookie());
  const shown = { ...viewer, cookies: [...viewer.cookies, ...clear] };
  const reveal = key === undefined ? undefined : await clients.takeSecretReveal(hashSecret(key), app.clientId, signedIn.user.id, new Date());
  const secret = reveal && openReveal(key!, reveal.sealedSecret);
  if (!reveal || secret === undefined) return secretShownPage(shown, app);
  if (reveal.reason === 'webhook-registered' || reveal.reason === 'webhook-rotated') {
    return webhookSecretPage(shown, app, secret, reveal.reason === 'webhook-registered');
  }
  return secretPage(shown, app, secret, reveal.reason === 'registered');
});

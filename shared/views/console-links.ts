// The addresses of the developer console's pages and the outcomes its forms report on them
// (POST-redirect-GET): what the pages link to and the handlers redirect to.

/** What the secret pages answer for a native or browser application (a public client), which has no secret. */
export const NO_SECRET = 'This is a native or browser application: it has no client secret, so there is none to show, replace or retire.';

/** An application's page in the developer console. */
export const appPath = (clientId: string): string => `/developer/apps/${encodeURIComponent(clientId)}`;

/** The page that shows an application's new secret, once (GET), and where a rotation is posted (POST). */
export const secretPath = (clientId: string): string => `/developer/apps/${encodeURIComponent(clientId)}/secret`;

/** The application's webhook: the form that sets its URL posts here; the other webhook forms post below it. */
export const webhookPath = (clientId: string): string => `/developer/apps/${encodeURIComponent(clientId)}/webhook`;

/** The application's page, at its webhook card, saying what a webhook form did (POST-redirect-GET). */
export const webhookDonePath = (clientId: string, done: WebhookOutcome): string =>
  `/developer/apps/${encodeURIComponent(clientId)}?done=${done}#webhook`;

/** What a webhook form did, said on the application's page it redirects to. */
export type WebhookOutcome = 'webhook-saved' | 'webhook-removed' | 'webhook-test-sent' | 'webhook-resent';

export const WEBHOOK_OUTCOMES: Readonly<Record<WebhookOutcome, string>> = {
  'webhook-saved': 'Webhook URL saved.',
  'webhook-removed': 'Webhook removed: no more events are sent to this application.',
  'webhook-test-sent': 'A webhook.test event is on its way; it appears in the deliveries below within seconds.',
  'webhook-resent': 'The delivery is sent again, with the same webhook-id; its row below shows the new attempt.',
};

/** The outcome `?done=` names on the application's page, if it is a webhook one. */
export function webhookOutcomeOf(query: Record<string, string | undefined> | undefined): WebhookOutcome | undefined {
  const done = query?.done;
  return done !== undefined && Object.hasOwn(WEBHOOK_OUTCOMES, done) ? (done as WebhookOutcome) : undefined;
}

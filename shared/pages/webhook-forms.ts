import { type Viewer } from '#shared/views/account-pages';
import { ownedApp, pathClientId } from '#shared/console/developer';
import { webhooks } from '#shared/runtime';
import type { Page, PageSpec } from '#shared/pages/page-handler';
import type { WebhookView } from '#shared/views/webhook-pages';
import type { WebhookSubscription } from '#shared/data/webhook-repo';
import type { Client } from '#shared/domain/client';
import type { HttpResult } from '#shared/http/responses';
import { appPage } from '#shared/views/console-pages';

/** How many deliveries the application page lists. */
export const DELIVERIES_SHOWN = 20;

/** The webhook card's contents: the last deliveries (one Query) only when there is a subscription. */
export async function webhookView(clientId: string, subscription: WebhookSubscription | undefined, extra: Omit<WebhookView, 'subscription' | 'deliveries'> = {}): Promise<WebhookView> {
  return { subscription, deliveries: subscription ? await webhooks.listDeliveries(clientId, DELIVERIES_SHOWN) : [], ...extra };
}

/**
 * What a webhook form of the application page needs (see PageSpec): CSRF, then one BatchGetItem
 * (session, user, the application, its subscription). Signed out: the login page, to come back to
 * the application's page (the console's when the path names no application).
 */
export const WEBHOOK_FORM = {
  form: true, csrf: true, session: 'required', reads: { client: pathClientId, webhook: true },
  loginReturn: ({ client }) => (client ? `/developer/apps/${encodeURIComponent(client.clientId)}` : '/developer'),
} as const satisfies PageSpec;

/** What a webhook form of the application page has read before it acts. */
export interface WebhookForm {
  form: Record<string, string>;
  viewer: Viewer;
  app: Client;
  subscription?: WebhookSubscription;
  /** The application page again, with the form's error on `field` (400), nothing changed. */
  refuse(field: string, message: string, url?: string): Promise<HttpResult>;
}

/** The webhook form's application, which the developer must own (404 otherwise), and how to refuse the form. */
export function webhookForm({ form, signedIn, client, viewer, webhook }: Page<typeof WEBHOOK_FORM>): WebhookForm {
  const app = ownedApp(client, signedIn.user.id);
  return {
    form, viewer, app, subscription: webhook,
    refuse: async (field, message, url) => appPage(viewer, app, undefined, {}, 400, await webhookView(app.clientId, webhook, { url, errors: { [field]: message } })),
  };
}

/** The form error when a webhook action needs a URL first. */
export const NO_WEBHOOK = 'Register a webhook URL first.';

import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { appPage, type Viewer } from '#shared/views/account-pages';
import { ownedApp, pathClientId } from '#shared/console/developer';
import { webhooks } from '#shared/runtime';
import { loginRedirect, pageContext } from '#shared/accounts/session';
import type { WebhookView } from '#shared/views/webhook-pages';
import type { WebhookSubscription } from '#shared/data/webhook-repo';
import type { Client } from '#shared/domain/client';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import type { HttpResult } from '#shared/http/responses';

/** How many deliveries the application page lists. */
export const DELIVERIES_SHOWN = 20;

/** The webhook card's contents: the last deliveries (one Query) only when there is a subscription. */
export async function webhookView(clientId: string, subscription: WebhookSubscription | undefined, extra: Omit<WebhookView, 'subscription' | 'deliveries'> = {}): Promise<WebhookView> {
  return { subscription, deliveries: subscription ? await webhooks.listDeliveries(clientId, DELIVERIES_SHOWN) : [], ...extra };
}

/** What a webhook form of the application page has read before it acts. */
export interface WebhookForm {
  form: Record<string, string>;
  viewer: Viewer;
  app: Client;
  subscription?: WebhookSubscription;
  /** The application page again, with the form's error on `field` (400), nothing changed. */
  refuse(field: string, message: string, url?: string): Promise<HttpResult>;
}

/**
 * The common start of a webhook form's POST: CSRF, then one BatchGetItem (session, user, the
 * application, its subscription); the developer must own the application (404 otherwise). Signed
 * out: the redirect to the login page instead.
 */
export async function readWebhookForm(event: APIGatewayProxyEventV2): Promise<WebhookForm | { redirect: HttpResult }> {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { signedIn, client, viewer, webhook } = await pageContext(event, pathClientId(event), true);
  if (!signedIn) return { redirect: loginRedirect(client ? `/developer/apps/${encodeURIComponent(client.clientId)}` : '/developer', 303) };
  const app = ownedApp(client, signedIn.user.id);
  return {
    form, viewer, app, subscription: webhook,
    refuse: async (field, message, url) => appPage(viewer, app, undefined, {}, 400, await webhookView(app.clientId, webhook, { url, errors: { [field]: message } })),
  };
}

/** The form error when a webhook action needs a URL first. */
export const NO_WEBHOOK = 'Register a webhook URL first.';

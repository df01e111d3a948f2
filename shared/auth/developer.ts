import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Client, ClientRegistration } from '#shared/domain/client';
import { NotFoundError } from '#shared/errors';

/** Reads the registration form's fields (redirect URIs: one per line). */
export function registrationFrom(form: Record<string, string>): ClientRegistration {
  return {
    name: (form.name ?? '').trim(),
    description: (form.description ?? '').trim(),
    website: (form.website ?? '').trim(),
    redirectUris: [...new Set((form.redirect_uris ?? '').split(/\r?\n/).map((line) => line.trim()).filter(Boolean))],
  };
}

/** The application of the page's path (`{client_id}`), to read with the session (see readPage). */
export const pathClientId = (event: APIGatewayProxyEventV2): string | undefined => event.pathParameters?.client_id;

/** The application the page read, if the signed-in developer owns it (404 otherwise). */
export function ownedApp(app: Client | undefined, developerId: string): Client {
  if (!app || app.developerId !== developerId) throw new NotFoundError('No such application.');
  return app;
}

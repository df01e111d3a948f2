import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { clients } from '#shared/auth/runtime';
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

/** The application named in the path, if the signed-in developer owns it (404 otherwise). */
export async function ownedApp(event: APIGatewayProxyEventV2, developerId: string): Promise<Client> {
  const app = await clients.getClient(event.pathParameters?.client_id ?? '');
  if (!app || app.developerId !== developerId) throw new NotFoundError('No such application.');
  return app;
}

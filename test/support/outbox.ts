import { readOutbox } from '#shared/email/outbox-mailer';
import type { LocalService } from '#local/service';

/** The e-mail the local service sent to an address, oldest first. */
export async function mailTo(service: LocalService, address: string) {
  return (await readOutbox(service.outboxDir)).filter((m) => m.to === address).reverse();
}

/** The token of the first link to `path` (on the service's auth host) in a message. */
export function linkToken(service: LocalService, text: string, path: string): string {
  const match = new RegExp(`${service.authUrl}${path}\\?token=([A-Za-z0-9_-]+)`).exec(text);
  if (!match) throw new Error(`no ${path} link in: ${text}`);
  return match[1]!;
}

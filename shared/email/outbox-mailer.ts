import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MailMessage, Mailer } from '#shared/email/mailer';

export interface StoredMessage extends MailMessage {
  id: string;
  sentAt: string;
}

/** Local delivery: one JSON file per message in `dir`, readable on the outbox page. */
export function createOutboxMailer(dir: string): Mailer {
  return {
    async send(message) {
      await mkdir(dir, { recursive: true });
      const sentAt = new Date().toISOString();
      const id = `${sentAt.replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}`;
      const stored: StoredMessage = { id, sentAt, ...message };
      await writeFile(join(dir, `${id}.json`), `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    },
  };
}

/** The outbox's messages, newest first. */
export async function readOutbox(dir: string): Promise<StoredMessage[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const messages = await Promise.all(names.filter((n) => n.endsWith('.json')).map(async (name) =>
    JSON.parse(await readFile(join(dir, name), 'utf8')) as StoredMessage));
  return messages.sort((a, b) => b.id.localeCompare(a.id));
}

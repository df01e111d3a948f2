import { outboxPage } from '#shared/views/account-pages';
import { pageHandler } from '#shared/pages/page-handler';
import { outboxDir } from '#shared/runtime';
import { readOutbox } from '#shared/email/outbox-mailer';

const dir = outboxDir();

/** GET /outbox — local only (not in the stack): the e-mail the local service "sent", with clickable links. */
export const handler = pageHandler({ session: 'optional' }, async ({ viewer }) => outboxPage(viewer, await readOutbox(dir), dir));

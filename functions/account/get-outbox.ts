import { outboxPage } from '#shared/views/account-pages';
import { pageContext } from '#shared/accounts/session';
import { outboxDir } from '#shared/runtime';
import { readOutbox } from '#shared/email/outbox-mailer';
import { pageHandler } from '#shared/http/page-handler';

const dir = outboxDir();

/** GET /outbox — local only (not in the stack): the e-mail the local service "sent", with clickable links. */
export const handler = pageHandler(async (event) => outboxPage((await pageContext(event)).viewer, await readOutbox(dir), dir));

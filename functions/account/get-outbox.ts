import { outboxPage } from '#shared/views/account-pages';
import { pageContext } from '#shared/accounts/session';
import { MAIL_ENV, requireEnv } from '#shared/config';
import { readOutbox } from '#shared/email/outbox-mailer';
import { pageHandler } from '#shared/http/page-handler';

const dir = requireEnv(MAIL_ENV.outboxDir);

/** GET /outbox — local only (not in the stack): the e-mail the local service "sent", with clickable links. */
export const handler = pageHandler(async (event) => outboxPage((await pageContext(event)).viewer, await readOutbox(dir), dir));

import { redirect } from '#shared/http/html';
import { pageHandler } from '#shared/http/page-handler';

/** GET / — the authorization server's home is the account page. */
export const handler = pageHandler(async () => redirect('/account'));

import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';

/** GET / — the authorization server's home is the account page. */
export const handler = pageHandler({}, async () => redirect('/account'));

import { resetRequestPage } from '#shared/auth/account-pages';
import { pageContext } from '#shared/auth/web';
import { pageHandler } from '#shared/http/page-handler';

/** GET /password-reset — asks for the account's e-mail address. */
export const handler = pageHandler(async (event) => resetRequestPage((await pageContext(event)).viewer));

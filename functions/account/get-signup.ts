import { signupPage } from '#shared/auth/account-pages';
import { pageContext } from '#shared/auth/web';
import { pageHandler } from '#shared/http/page-handler';

/** GET /signup — the sign-up form. */
export const handler = pageHandler(async (event) => signupPage((await pageContext(event)).viewer));

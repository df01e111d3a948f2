import { deviceCodePage } from '#shared/views/device-pages';
import { pageHandler } from '#shared/pages/page-handler';

/**
 * GET /device (docs/api.md#device-page; RFC 8628 §3.3): where the user types the code their device
 * shows, pre-filled from `verification_uri_complete` (`/device?user_code=BCDF-GHJK`). A signed-out
 * browser signs in first and comes back here, code and all. One BatchGetItem (session, user);
 * nothing is looked up until the user submits the code.
 */
export const handler = pageHandler({
  session: 'required', loginReturn: ({ event }) => `${event.rawPath}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`,
}, async ({ event, signedIn, viewer }) => deviceCodePage({
  email: signedIn.user.email, csrf: viewer.csrf, cookies: viewer.cookies, userCode: event.queryStringParameters?.user_code?.slice(0, 32),
}));

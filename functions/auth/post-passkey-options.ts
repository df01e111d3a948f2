import { authenticationOptions, relyingParty } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { jsonOf } from '#shared/pages/security';

/**
 * POST /login/passkey/options — the options of a passkey sign-in, as JSON for the page's script: a
 * new challenge (one PutItem, 5 minutes, single use). A form post with the page's CSRF field, so no
 * other site can have challenges made in a signed-out browser's name.
 */
export const handler = pageHandler({ form: true, csrf: true }, async () => jsonOf(await authenticationOptions(relyingParty(), new Date())));

import { registrationOptions, relyingParty } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { jsonOf } from '#shared/pages/security';

/**
 * POST /account/security/passkeys/options — the options of a new passkey's registration, as JSON for
 * the security page's script (registrationOptions: Query of the user's passkeys, to exclude them,
 * and PutItem of the challenge, this user's, 5 minutes, single use).
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account/security' }, async ({ signedIn }) =>
  jsonOf(await registrationOptions(relyingParty(), signedIn.user, new Date())));

import { passkeyScript } from '#shared/pages/passkey-script';
import { publicHandler } from '#shared/http/http';

const body = passkeyScript();
const HEADERS = { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' };

/** GET /assets/passkeys.js — the passkey ceremonies of the sign-in and security pages (@simplewebauthn/browser and the pages' code). */
export const handler = publicHandler(async () => ({ statusCode: 200, headers: HEADERS, body }));

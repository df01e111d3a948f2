import { SERVICE_NAME } from '#shared/views/theme';

/** The cookie holding the key of the recovery codes waiting to be shown once, sent only to their page. */
export const RECOVERY_KEY_COOKIE = 'recovery_key';
export const RECOVERY_CODES_PATH = '/account/security/recovery-codes';
/** The name authenticator apps show the account under. */
export const TOTP_ISSUER_NAME = SERVICE_NAME;

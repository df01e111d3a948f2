import { KNOWN_BROWSER_COOKIE_PATH } from '#shared/accounts/login-throttle';

/**
 * The cookie of a sign-in waiting for its second factor (shared/data/factor-repo.ts): HttpOnly,
 * SameSite=Lax, sent only to the sign-in's pages, for as long as the sign-in waits.
 */
export const PENDING_SIGN_IN_COOKIE = 'pending_sign_in';
export const PENDING_SIGN_IN_COOKIE_PATH = KNOWN_BROWSER_COOKIE_PATH;

/** The second-factor page, to go on to `returnTo` once the sign-in completes. */
export const secondFactorPath = (returnTo: string) => `/login/second-factor?return_to=${encodeURIComponent(returnTo)}`;

import type { SessionDetails } from '#shared/data/session-repo';
import type { SignInProfile } from '#shared/data/user-repo';
import { formatTimestamp } from '#shared/domain/time';

/** The module that mails an alert, bundled on its own beside the sign-in functions (their `lazyModules`). */
export const SIGN_IN_ALERT_ENTRY = 'shared/accounts/sign-in-alert-mail.ts';

/** A sign-in from a browser the account has not seen before, to tell its owner about. */
export interface SignInAlert {
  to: string;
  firstname: string;
  browser: string;
  address: string;
  /** When, `YYYY-MM-DDTHH:mm:ss.SSS` UTC. */
  at: string;
}

/**
 * The alert a sign-in calls for: when the browser is not one the account signed in from before
 * (no live known-browser cookie of this account: shared/accounts/login-throttle.ts) and the account
 * has signed in before (its very first sign-in, right after sign-up, is no news to its owner).
 */
export function signInAlertOf(profile: SignInProfile | undefined, knownBrowser: boolean, details: SessionDetails, now: number): SignInAlert | undefined {
  if (!profile || knownBrowser || profile.lastSignInAt === undefined) return undefined;
  return { to: profile.user.email, firstname: profile.user.firstname, browser: details.browser, address: details.address, at: formatTimestamp(new Date(now)) };
}

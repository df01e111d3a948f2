import { CLAIM_REPO_OPERATIONS as claims } from '#shared/data/claim-repo';
import { CLIENT_REPO_OPERATIONS as clients } from '#shared/data/client-repo';
import { DEVICE_GRANT_REPO_OPERATIONS as deviceGrants } from '#shared/data/device-grant-repo';
import { DEVICE_REPO_OPERATIONS as devices } from '#shared/data/device-repo';
import { ERASURE_REPO_OPERATIONS as erasure } from '#shared/data/erasure-repo';
import { FACTOR_REPO_OPERATIONS as factors } from '#shared/data/factor-repo';
import { FACTOR_SUMMARY_REPO_OPERATIONS as factorSummaries } from '#shared/data/factor-summary-repo';
import { PASSKEY_REPO_OPERATIONS as passkeys } from '#shared/data/passkey-repo';
import { PRESENCE_REPO_OPERATIONS as presence } from '#shared/data/presence-repo';
import { RECOVERY_CODE_REPO_OPERATIONS as recoveryCodes } from '#shared/data/recovery-code-repo';
import { SERIAL_REPO_OPERATIONS as serials } from '#shared/data/serial-repo';
import { GRANT_REPO_OPERATIONS as grants } from '#shared/data/grant-repo';
import { KNOWN_BROWSER_REPO_OPERATIONS as knownBrowsers } from '#shared/data/known-browser-repo';
import { LINK_REPO_OPERATIONS as links } from '#shared/data/link-repo';
import { MAIL_LIMIT_REPO_OPERATIONS as mailLimits } from '#shared/data/mail-limit-repo';
import { SESSION_REPO_OPERATIONS as sessions } from '#shared/data/session-repo';
import { SHADOW_REPO_OPERATIONS as shadowReports } from '#shared/data/shadow-repo';
import { SIGNING_KEY_REPO_OPERATIONS as signingKeys } from '#shared/data/signing-key-repo';
import { THROTTLE_REPO_OPERATIONS as throttle } from '#shared/data/throttle-repo';
import { USER_REPO_OPERATIONS as users } from '#shared/data/user-repo';
import { WEBHOOK_REPO_OPERATIONS as webhooks } from '#shared/data/webhook-repo';
import { REDELIVER_USES, SEND_TEST_EVENT_USES } from '#shared/webhooks/dispatch';
import type { TableOperation } from '#shared/data/table-access';
import type { Repos, UsesDeclaration } from '#shared/data/uses';
import { EXPORT_USES } from '#shared/accounts/account-export';
import { PASSWORD_RESET_REQUEST_USES, SEND_CONFIRMATION_USES, SIGN_UP_USES } from '#shared/accounts/accounts';
import { CONFIRM_IDENTITY_USES } from '#shared/accounts/confirm-identity';
import { LOGIN_USES } from '#shared/accounts/login';
import { PASSKEY_SIGN_IN_USES } from '#shared/accounts/passkeys';
import { NEW_PASSWORD_USES, RESET_LINK_USES } from '#shared/accounts/password-reset';
import { COMPLETE_SIGN_IN_USES, REMOVE_AUTHENTICATOR_USES } from '#shared/accounts/second-factor';
import { PRESENCE_USES } from '#shared/presence/record-presence';
import { CLAIM_USES, REMOVE_DEVICE_USES } from '#shared/devices/claiming';
import { PRE_PROVISION_USES } from '#shared/devices/fleet-provisioning';
import { REPORT_USES } from '#shared/shadow/record-report';
import { DELIVER_USES } from '#shared/webhooks/deliver';
import { DISABLED_NOTICE_USES } from '#shared/webhooks/disabled-notice';
import { APPLICATIONS_IN_USE_USES, DELETE_ACCOUNT_USES } from '#shared/accounts/account-deletion';
import { FAN_OUT_USES } from '#shared/webhooks/fan-out';
import { DEVICE_APPROVAL_USES } from '#shared/oauth/device-approval';
import { ISSUE_CODE_USES } from '#shared/oauth/authorize-request';
import { REVOKE_TOKEN_USES } from '#shared/oauth/revocation';
import { EXCHANGE_CODE_USES } from '#shared/oauth/grants/authorization-code';
import { REFRESH_USES } from '#shared/oauth/grants/refresh-token';
import { AUTHORIZE_DEVICE_USES, POLL_DEVICE_CODE_USES } from '#shared/oauth/grants/device-code';
import { AUTHENTICATION_OPTIONS_USES, REGISTER_PASSKEY_USES, REGISTRATION_OPTIONS_USES } from '#shared/accounts/passkeys';
import { ENROL_AUTHENTICATOR_USES } from '#shared/accounts/second-factor';
import { RENEW_RECOVERY_CODES_USES } from '#shared/accounts/recovery-codes';
import { REGISTER_APP_USES, REVEAL_WEBHOOK_SECRET_USES, ROTATE_APP_SECRET_USES } from '#shared/console/developer';
import { AUTHORIZED_APPS_USES, DELETE_APPLICATION_USES, END_APP_ACCESS_USES, END_EVERY_APP_ACCESS_USES } from '#shared/oauth/app-access';

// The data operations the functions' declarations (`needs.table` of functions/<area>/<name>.route.ts)
// are made of: each repository's operations, and the groups the services of shared/ use, named
// after the service, so that a function calling a service lists the service and not its insides.
// When a service changes how it reads or writes, its group here changes, and so does the grant of
// every function that uses it (infra/function-grants.ts). Data only: no client, no environment.

/** The operations of each repository, each with the DynamoDB actions it declares next to its code. */
export {
  claims, clients, deviceGrants, devices, erasure, factors, factorSummaries, grants, knownBrowsers, links, mailLimits, passkeys, presence, recoveryCodes, serials, sessions,
  shadowReports, signingKeys, throttle, users, webhooks,
};

/** Every repository's operations, by the name shared/data/uses.ts gives it (one missing does not compile). */
const REPOSITORIES = {
  claims, clients, deviceGrants, devices, erasure, factors, factorSummaries, grants, knownBrowsers, links, mailLimits, passkeys, presence, recoveryCodes, serials,
  sessions, shadowReports, signingKeys, throttle, users, webhooks,
} as const satisfies Record<keyof Repos, object>;

/** The operations a service declares it uses (its `*_USES` constant, shared/data/uses.ts), as the grants read them. */
export function usesOf(uses: UsesDeclaration): TableOperation[] {
  if (Array.isArray(uses)) return (uses as readonly UsesDeclaration[]).flatMap((part) => usesOf(part));
  return Object.entries(uses).flatMap(([repo, methods]) =>
    ((methods ?? []) as readonly string[]).map((method) => (REPOSITORIES[repo as keyof typeof REPOSITORIES] as Record<string, TableOperation>)[method]!));
}

// The services (shared/oauth/, shared/accounts/, shared/console/, shared/webhooks/) and the operations they use.
/** pages/session.ts readPage and pageContext (every pageHandler with a session): session, user, application and consent in one read. */
export const pageReads = [sessions.signedInRead, clients.clientsRead, grants.consentRead];
/** The application page and its webhook forms: pageReads with the subscription, and the last deliveries. */
export const appPageReads = [...pageReads, webhooks.subscriptionRead, webhooks.listDeliveries];
/** A webhook action's page: refused only when there is no webhook, so it never lists deliveries. */
export const webhookFormReads = [...pageReads, webhooks.subscriptionRead];
/** oauth/authorize-request.ts issueCode: the code alone, or with the new consent. */
export const issueCode = usesOf(ISSUE_CODE_USES);
/** oauth/grants/authorization-code.ts, oauth/grants/refresh-token.ts and oauth/revocation.ts. */
export const exchangeCode = usesOf(EXCHANGE_CODE_USES);
export const refresh = usesOf(REFRESH_USES);
export const revokeToken = usesOf(REVOKE_TOKEN_USES);
/** oauth/grants/device-code.ts: the device authorization, and a poll (the client read only for a confidential client, or a refusal). */
export const authorizeDevice = usesOf(AUTHORIZE_DEVICE_USES);
export const pollDeviceCode = usesOf(POLL_DEVICE_CODE_USES);
/** oauth/device-approval.ts: a user code entered at /device, and the decision on it. */
export const deviceApproval = usesOf(DEVICE_APPROVAL_USES);
/** accounts/accounts.ts signUp, sendConfirmation and requestPasswordReset: each counts its mail against the address's limit. */
export const signUp = usesOf(SIGN_UP_USES);
export const sendConfirmation = usesOf(SEND_CONFIRMATION_USES);
export const requestPasswordReset = usesOf(PASSWORD_RESET_REQUEST_USES);
/** oauth/app-access.ts endEveryAppAccess: the account page's revoke, for every application the user authorized. */
export const endEveryAppAccess = usesOf(END_EVERY_APP_ACCESS_USES);
/** oauth/app-access.ts endAppAccess: the account page's revoke of one application. */
export const endAppAccess = usesOf(END_APP_ACCESS_USES);
/** oauth/app-access.ts authorizedApps: the account page's list of the applications the user authorized. */
export const authorizedApps = usesOf(AUTHORIZED_APPS_USES);
/** accounts/password-reset.ts resetLinkAccount and setNewPassword. */
export const resetLinkAccount = usesOf(RESET_LINK_USES);
export const setNewPassword = usesOf(NEW_PASSWORD_USES);
/** webhooks/dispatch.ts redeliver and sendTestEvent. */
export const redeliver = usesOf(REDELIVER_USES);
export const sendTestEvent = usesOf(SEND_TEST_EVENT_USES);
/** oauth/app-access.ts deleteApplication: the application, its users' grants and consents, its webhook. */
export const deleteApplication = usesOf(DELETE_APPLICATION_USES);
/** accounts/account-deletion.ts applicationsInUse: the user's applications, and who has authorized each. */
export const applicationsInUse = usesOf(APPLICATIONS_IN_USE_USES);
/** accounts/confirm-identity.ts confirmIdentity: the password asked again, within the login throttle. */
export const confirmIdentity = usesOf(CONFIRM_IDENTITY_USES);
/** accounts/account-deletion.ts deleteAccount: the marker, every grant, the applications, devices, address, sessions, profile. */
export const deleteAccount = usesOf(DELETE_ACCOUNT_USES);
/** accounts/account-export.ts exportAccount: everything stored about the user, read. */
export const exportAccount = [...usesOf(EXPORT_USES), webhooks.subscriptionRead];
/** accounts/login.ts attemptLogin: the password's throttle, the user, and a session or (second factor) a pending sign-in. */
export const attemptLogin = usesOf(LOGIN_USES);
/** accounts/second-factor.ts completeSignIn: the pending sign-in, the factors, the throttle, then the session with the code spent. */
export const completeSignIn = usesOf(COMPLETE_SIGN_IN_USES);
/** accounts/second-factor.ts removeAuthenticator: a fresh code, throttled, spent by the removal. */
export const removeAuthenticator = usesOf(REMOVE_AUTHENTICATOR_USES);
/** accounts/passkeys.ts registrationOptions, registerPasskey and authenticationOptions: the ceremonies' challenges, and the passkeys. */
export const registrationOptions = usesOf(REGISTRATION_OPTIONS_USES);
export const registerPasskey = usesOf(REGISTER_PASSKEY_USES);
export const authenticationOptions = usesOf(AUTHENTICATION_OPTIONS_USES);
/** accounts/second-factor.ts enrolAuthenticator and accounts/recovery-codes.ts renewRecoveryCodes: the factor and its codes, in one transaction. */
export const enrolAuthenticator = usesOf(ENROL_AUTHENTICATOR_USES);
export const renewRecoveryCodes = usesOf(RENEW_RECOVERY_CODES_USES);
/** console/developer.ts registerApp, rotateAppSecret and revealWebhookSecret: the application and its secret waiting to be shown once. */
export const registerApp = usesOf(REGISTER_APP_USES);
export const rotateAppSecret = usesOf(ROTATE_APP_SECRET_USES);
export const revealWebhookSecret = usesOf(REVEAL_WEBHOOK_SECRET_USES);
/** accounts/passkeys.ts signInWithPasskey: the address's throttle, the passkey, the challenge taken, then the session. */
export const signInWithPasskey = usesOf(PASSKEY_SIGN_IN_USES);
/** presence/record-presence.ts recordPresence: the device's owner, then its presence. */
export const recordPresence = usesOf(PRESENCE_USES);
/** shadow/record-report.ts recordReport: the device's owner, then the report. */
export const recordReport = usesOf(REPORT_USES);
/** webhooks/fan-out.ts fanOut: the owners' consents, the subscriptions, a delivery per event. */
export const fanOut = usesOf(FAN_OUT_USES);
/** webhooks/deliver.ts deliverMessage: delivery, subscription and consent in one read, then the attempt's outcome. */
export const deliverMessage = usesOf(DELIVER_USES);
/** webhooks/disabled-notice.ts sendDisabledNotice: the application and its developer, for the e-mail. */
export const disabledNotice = usesOf(DISABLED_NOTICE_USES);
/** devices/claiming.ts claimDevice: the entry counted, the code and its device read, then the claim. */
export const claimDevice = usesOf(CLAIM_USES);
/** devices/claiming.ts removeDevice: the user's consents, the device marked, then freed and dropped from the consents. */
export const removeDevice = usesOf(REMOVE_DEVICE_USES);
/** devices/fleet-provisioning.ts preProvision: the serial read, then taken with the device's certificate. */
export const preProvision = usesOf(PRE_PROVISION_USES);

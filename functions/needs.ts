import { CLIENT_REPO_OPERATIONS as clients } from '#shared/data/client-repo';
import { DEVICE_GRANT_REPO_OPERATIONS as deviceGrants } from '#shared/data/device-grant-repo';
import { DEVICE_REPO_OPERATIONS as devices } from '#shared/data/device-repo';
import { ERASURE_REPO_OPERATIONS as erasure } from '#shared/data/erasure-repo';
import { FACTOR_REPO_OPERATIONS as factors } from '#shared/data/factor-repo';
import { FACTOR_SUMMARY_REPO_OPERATIONS as factorSummaries } from '#shared/data/factor-summary-repo';
import { PASSKEY_REPO_OPERATIONS as passkeys } from '#shared/data/passkey-repo';
import { PRESENCE_REPO_OPERATIONS as presence } from '#shared/data/presence-repo';
import { RECOVERY_CODE_REPO_OPERATIONS as recoveryCodes } from '#shared/data/recovery-code-repo';
import { GRANT_REPO_OPERATIONS as grants } from '#shared/data/grant-repo';
import { LINK_REPO_OPERATIONS as links } from '#shared/data/link-repo';
import { MAIL_LIMIT_REPO_OPERATIONS as mailLimits } from '#shared/data/mail-limit-repo';
import { SESSION_REPO_OPERATIONS as sessions } from '#shared/data/session-repo';
import { SHADOW_REPO_OPERATIONS as shadowReports } from '#shared/data/shadow-repo';
import { SIGNING_KEY_REPO_OPERATIONS as signingKeys } from '#shared/data/signing-key-repo';
import { THROTTLE_REPO_OPERATIONS as throttle } from '#shared/data/throttle-repo';
import { USER_REPO_OPERATIONS as users } from '#shared/data/user-repo';
import { WEBHOOK_REPO_OPERATIONS as webhooks } from '#shared/data/webhook-repo';
import { DISPATCH_OPERATIONS } from '#shared/webhooks/dispatch';
import type { TableOperation } from '#shared/data/table-access';
import type { UsesDeclaration } from '#shared/data/uses';
import { EXPORT_USES } from '#shared/accounts/account-export';
import { PASSWORD_RESET_REQUEST_USES, SEND_CONFIRMATION_USES, SIGN_UP_USES } from '#shared/accounts/accounts';
import { CONFIRM_IDENTITY_USES } from '#shared/accounts/confirm-identity';
import { LOGIN_USES } from '#shared/accounts/login';
import { PASSKEY_SIGN_IN_USES } from '#shared/accounts/passkeys';
import { NEW_PASSWORD_USES, RESET_LINK_USES } from '#shared/accounts/password-reset';
import { COMPLETE_SIGN_IN_USES, REMOVE_AUTHENTICATOR_USES } from '#shared/accounts/second-factor';
import { PRESENCE_USES } from '#shared/presence/record-presence';
import { REPORT_USES } from '#shared/shadow/record-report';
import { DELIVER_USES } from '#shared/webhooks/deliver';
import { FAN_OUT_USES } from '#shared/webhooks/fan-out';
import { DEVICE_APPROVAL_USES } from '#shared/oauth/device-approval';
import { AUTHORIZED_APPS_USES, DELETE_APPLICATION_USES, END_APP_ACCESS_USES, END_EVERY_APP_ACCESS_USES } from '#shared/oauth/app-access';

// The data operations the functions' declarations (`needs.table` of functions/<area>/<name>.route.ts)
// are made of: each repository's operations, and the groups the services of shared/ use, named
// after the service, so that a function calling a service lists the service and not its insides.
// When a service changes how it reads or writes, its group here changes, and so does the grant of
// every function that uses it (infra/function-grants.ts). Data only: no client, no environment.

/** The operations of each repository, each with the DynamoDB actions it declares next to its code. */
export {
  clients, deviceGrants, devices, erasure, factors, factorSummaries, grants, links, mailLimits, passkeys, presence, recoveryCodes, sessions, shadowReports, signingKeys,
  throttle, users, webhooks,
};

const REPOSITORIES = {
  clients, deviceGrants, devices, erasure, factors, factorSummaries, grants, links, mailLimits, passkeys, presence, recoveryCodes, sessions, shadowReports, signingKeys,
  throttle, users, webhooks,
} as const;

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
export const issueCode = [grants.createCode, grants.saveConsentWithCode];
/** oauth/grants/authorization-code.ts, oauth/grants/refresh-token.ts and oauth/revocation.ts. */
export const exchangeCode = [grants.getCodeClientAndConsent, grants.redeemCode, grants.revokeFamily];
export const refresh = [grants.getFamilyClientAndConsent, grants.getFamily, grants.rotateRefreshToken, grants.revokeFamily];
export const revokeToken = [grants.getFamilyClientAndConsent, grants.revokeFamily];
/** oauth/grants/device-code.ts: the device authorization, and a poll (the client read only for a confidential client, or a refusal). */
export const authorizeDevice = [grants.getFamilyClientAndConsent, deviceGrants.createDeviceAuthorization];
export const pollDeviceCode = [
  grants.getFamilyClientAndConsent, deviceGrants.recordPoll, deviceGrants.slowDown, deviceGrants.redeemDeviceCode, grants.revokeFamily,
];
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
/** webhooks/dispatch.ts redeliver and sendTestEvent (DISPATCH_OPERATIONS). */
export const redeliver = DISPATCH_OPERATIONS.redeliver.map((op) => webhooks[op]);
export const sendTestEvent = DISPATCH_OPERATIONS.sendTestEvent.map((op) => webhooks[op]);
/** oauth/app-access.ts deleteApplication: the application, its users' grants and consents, its webhook. */
export const deleteApplication = usesOf(DELETE_APPLICATION_USES);
/** accounts/account-deletion.ts applicationsInUse: the user's applications, and who has authorized each. */
export const applicationsInUse = [clients.listClientsByDeveloper, grants.grantsOf];
/** accounts/confirm-identity.ts confirmIdentity: the password asked again, within the login throttle. */
export const confirmIdentity = usesOf(CONFIRM_IDENTITY_USES);
/** accounts/account-deletion.ts deleteAccount: the marker, every grant, the applications, devices, address, sessions, profile. */
export const deleteAccount = [
  erasure.getSubject, ...applicationsInUse, grants.listConsentsByUser, erasure.markDeleting, erasure.markConsentEnding, grants.deleteConsent,
  erasure.grantsOfUser, erasure.deleteItems, erasure.webhookKeyOf, erasure.deliveryKeysOf, ...deleteApplication, erasure.deviceKeysOf, erasure.releaseAddress,
  erasure.recordFarewellMailed, sessions.sessionKeysOf, erasure.deleteProfile, erasure.factorKeysOf, erasure.throttleKeysOf,
];
/** accounts/account-export.ts exportAccount: everything stored about the user, read. */
export const exportAccount = [...usesOf(EXPORT_USES), webhooks.subscriptionRead];
/** accounts/login.ts attemptLogin: the password's throttle, the user, and a session or (second factor) a pending sign-in. */
export const attemptLogin = usesOf(LOGIN_USES);
/** accounts/second-factor.ts completeSignIn: the pending sign-in, the factors, the throttle, then the session with the code spent. */
export const completeSignIn = usesOf(COMPLETE_SIGN_IN_USES);
/** accounts/second-factor.ts removeAuthenticator: a fresh code, throttled, spent by the removal. */
export const removeAuthenticator = usesOf(REMOVE_AUTHENTICATOR_USES);
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

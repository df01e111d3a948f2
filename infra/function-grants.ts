import type { FunctionName } from '#shared/routes';
import { CLIENT_REPO_NEEDS as clients } from '#shared/data/client-repo';
import { DEVICE_REPO_NEEDS as devices } from '#shared/data/device-repo';
import { GRANT_REPO_NEEDS as grants } from '#shared/data/grant-repo';
import { LINK_REPO_NEEDS as links } from '#shared/data/link-repo';
import { MAIL_LIMIT_REPO_NEEDS as mailLimits } from '#shared/data/mail-limit-repo';
import { SESSION_REPO_NEEDS as sessions } from '#shared/data/session-repo';
import { SIGNING_KEY_REPO_NEEDS as signingKeys } from '#shared/data/signing-key-repo';
import { THROTTLE_REPO_NEEDS as throttle } from '#shared/data/throttle-repo';
import { unionOfNeeds, type TableNeed } from '#shared/data/table-access';
import { USER_REPO_NEEDS as users } from '#shared/data/user-repo';
import { WEBHOOK_REPO_NEEDS as webhooks } from '#shared/data/webhook-repo';
import { DISPATCH_NEEDS } from '#shared/webhooks/dispatch';

// Each function's role is derived from the data operations its handler uses: the repository methods
// it calls, directly or through the auth services named below. Each method declares its own
// DynamoDB actions next to its code (`*_REPO_NEEDS`), so when an operation changes how it reads or
// writes (a GetItem becoming a BatchGetItem), every function that uses it is granted the new action.
// test/infra/iam-grants.test.ts checks the result against the calls the functions really make.

export interface FunctionNeeds {
  /** The data operations the handler uses. */
  table?: readonly TableNeed[];
  /**
   * Signing-key access, on the stack's tagged keys: 'sign' (kms:Sign, the token issuer), 'verify'
   * (kms:GetPublicKey, the JWKS) or 'rotate' (create, alias and schedule deletion: the rotation function).
   */
  signingKey?: 'sign' | 'verify' | 'rotate';
  /** Sends account e-mail (ses:SendEmail from the configured sender). */
  sendsMail?: boolean;
  /** The webhook delivery queue: 'send' (sqs:SendMessage) and/or 'retry' (sqs:ChangeMessageVisibility, a failed delivery's backoff). */
  webhookQueue?: readonly ('send' | 'retry')[];
}

// The services (shared/oauth/, shared/accounts/, shared/console/) and the operations they use.
/** web.ts readPage, pageContext, signedInUser: session, user, application and consent in one read. */
const pageReads = [sessions.signedInRead, clients.clientsRead, grants.consentRead];
/** The application page and its webhook forms: pageReads with the subscription, and the last deliveries. */
const appPageReads = [...pageReads, webhooks.subscriptionRead, webhooks.listDeliveries];
/** A webhook action's page: refused only when there is no webhook, so it never lists deliveries. */
const webhookFormReads = [...pageReads, webhooks.subscriptionRead];
/** authorize-request.ts issueCode: the code alone, or with the new consent. */
const issueCode = [grants.createCode, grants.saveConsentWithCode];
/** token-service.ts exchangeCode, refresh and revokeToken. */
const exchangeCode = [grants.getCodeClientAndConsent, grants.redeemCode, grants.revokeFamily];
const refresh = [grants.getFamilyClientAndConsent, grants.getFamily, grants.rotateRefreshToken, grants.revokeFamily];
const revokeToken = [grants.getFamilyClientAndConsent, grants.revokeFamily];
/** accounts.ts signUp, sendConfirmation and requestPasswordReset: each counts its mail against the address's limit. */
const signUp = [users.createUser, links.newLink, mailLimits.takeMailSlot];
const sendConfirmation = [links.createLink, mailLimits.takeMailSlot];
const requestPasswordReset = [mailLimits.takeMailSlot, users.findUserByEmail, links.createLink];
/** app-access.ts endEveryAppAccess: the account page's revoke, for every application the user authorized. */
const endEveryAppAccess = [grants.listConsentsByUser, grants.deleteConsent, grants.grantsOf, grants.revokeFamilies];
/** dispatch.ts redeliver and sendTestEvent (DISPATCH_NEEDS). */
const redeliver = DISPATCH_NEEDS.redeliver.map((op) => webhooks[op]);
const sendTestEvent = DISPATCH_NEEDS.sendTestEvent.map((op) => webhooks[op]);

export const FUNCTION_NEEDS: Record<FunctionName, FunctionNeeds> = {
  'get-user': { table: [users.getUserById] },
  'list-devices': { table: [devices.listDevicesByOwner] },
  'get-device': { table: [devices.getOwnedDevice] },
  'update-device': { table: [devices.updateOwnedDevice] },
  'get-openapi': {},
  'get-api-reference': {},
  'get-api-reference-script': {},
  'get-avatar': {},
  'get-discovery': {},
  'get-authorize': { table: [...pageReads, ...issueCode] },
  'post-authorize': { table: [...pageReads, ...issueCode] },
  'post-token': { table: [...exchangeCode, ...refresh, signingKeys.getSchedule], signingKey: 'sign' },
  'post-revoke': { table: revokeToken },
  'get-login': { table: pageReads },
  'post-login': {
    table: [
      throttle.recordsRead, users.userIdOfEmailRead, throttle.knownBrowserRead, throttle.reserveKnownBrowser, throttle.reserve, users.getUserRecord,
      sessions.createSession, throttle.newKnownBrowser, throttle.forgetKnownBrowserItem, throttle.creditItems,
    ],
  },
  'post-logout': { table: [sessions.deleteSession] },
  'get-home': {},
  'get-signup': { table: pageReads },
  'post-signup': { table: [...pageReads, ...signUp], sendsMail: true },
  'get-confirm-email': { table: [...pageReads, links.peekLink] },
  'post-confirm-email': { table: [...pageReads, links.peekLink, links.redeemLink] },
  'post-resend-confirmation': { table: [...pageReads, ...sendConfirmation], sendsMail: true },
  'get-password-reset': { table: pageReads },
  'post-password-reset': { table: requestPasswordReset, sendsMail: true },
  'get-new-password': { table: [...pageReads, links.readLink, users.getUserRecord] },
  'post-new-password': {
    table: [...pageReads, links.readLink, users.getUserRecord, ...endEveryAppAccess, sessions.sessionKeysOf, links.redeemLink],
  },
  'get-account': { table: [...pageReads, grants.listConsentsByUser] },
  'post-revoke-app': { table: [...pageReads, grants.deleteConsent, grants.grantsOf, grants.revokeFamilies] },
  'get-outbox': { table: pageReads },
  'get-developer': { table: [...pageReads, clients.listClientsByDeveloper] },
  'post-register-app': { table: [...pageReads, clients.listClientsByDeveloper, clients.registerClient] },
  'get-app': { table: appPageReads },
  'post-update-app': { table: [...appPageReads, clients.updateClient] },
  'post-rotate-secret': { table: [...appPageReads, clients.rotateSecret] },
  'get-app-secret': { table: [...pageReads, clients.takeSecretReveal] },
  'post-retire-secret': { table: [...pageReads, clients.retirePreviousSecret] },
  'get-delete-app': { table: pageReads },
  'post-delete-app': {
    table: [...pageReads, grants.grantsOf, grants.revokeFamiliesThen, clients.deleteClientItem, grants.deleteConsentItem, webhooks.deleteSubscriptionItem],
  },
  'post-webhook': { table: [...appPageReads, webhooks.setUrl, clients.saveSecretReveal] },
  'post-rotate-webhook-secret': { table: [...appPageReads, webhooks.rotateSecret, clients.saveSecretReveal] },
  'post-delete-webhook': { table: [...appPageReads, webhooks.removeSubscription] },
  'post-send-test-event': { table: [...webhookFormReads, ...sendTestEvent], webhookQueue: ['send'] },
  'post-redeliver-event': { table: [...webhookFormReads, ...redeliver], webhookQueue: ['send'] },
  'get-jwks': { table: [signingKeys.getSchedule], signingKey: 'verify' },
  'http-fallback': {},
  'rotate-signing-key': { table: [signingKeys.getSchedule, signingKeys.saveSchedule], signingKey: 'rotate' },
  // shared/webhooks/fan-out.ts: the owner's consents, their subscriptions, one delivery per event and application.
  'fan-out-events': { table: [grants.listConsentsByUser, webhooks.subscriptionsRead, webhooks.createDelivery], webhookQueue: ['send'] },
  // shared/webhooks/deliver.ts (delivery, subscription and consent in one read), and the e-mail to the developer of a disabled one.
  'deliver-webhooks': {
    table: [
      webhooks.deliveryRead, webhooks.subscriptionRead, grants.consentRead, webhooks.recordAttempt, webhooks.markFailing,
      webhooks.clearFailing, webhooks.disableSubscription, clients.getClient, users.getUserById,
    ],
    sendsMail: true,
    webhookQueue: ['retry'],
  },
};

/** The DynamoDB grant of a function: the union of what its operations declare. */
export function tableGrantOf(fn: FunctionName) {
  return unionOfNeeds(FUNCTION_NEEDS[fn].table ?? []);
}

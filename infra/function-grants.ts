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
}

// The auth services (shared/auth/) and the operations they use.
/** web.ts readPage, pageContext, signedInUser: session, user, application and consent in one read. */
const pageReads = [sessions.signedInRead, clients.clientsRead, grants.consentRead];
/** authorize-request.ts issueCode: the code alone, or with the new consent. */
const issueCode = [grants.createCode, grants.saveConsentWithCode];
/** token-service.ts exchangeCode, refresh and revokeToken. */
const exchangeCode = [grants.getCodeAndClient, grants.redeemCode, grants.markCodeReplayed, grants.revokeFamily];
const refresh = [grants.getFamilyClientAndConsent, grants.getFamily, grants.rotateRefreshToken, grants.revokeFamily];
const revokeToken = [grants.getFamilyClientAndConsent, grants.revokeFamily];
/** accounts.ts signUp, sendConfirmation and requestPasswordReset: each counts its mail against the address's limit. */
const signUp = [users.createUser, links.newLink, mailLimits.takeMailSlot];
const sendConfirmation = [links.createLink, mailLimits.takeMailSlot];
const requestPasswordReset = [mailLimits.takeMailSlot, users.findUserByEmail, links.createLink];
/** app-access.ts endEveryAppAccess: the account page's revoke, for every application the user authorized. */
const endEveryAppAccess = [grants.listConsentsByUser, grants.deleteConsent, grants.grantsOf, grants.revokeFamilies];

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
  'get-app': { table: pageReads },
  'post-update-app': { table: [...pageReads, clients.updateClient] },
  'post-rotate-secret': { table: [...pageReads, clients.rotateSecret] },
  'get-app-secret': { table: [...pageReads, clients.takeSecretReveal] },
  'post-retire-secret': { table: [...pageReads, clients.retirePreviousSecret] },
  'get-delete-app': { table: pageReads },
  'post-delete-app': { table: [...pageReads, grants.grantsOf, grants.revokeFamiliesThen, clients.deleteClientItem, grants.deleteConsentItem] },
  'get-jwks': { table: [signingKeys.getSchedule], signingKey: 'verify' },
  'http-fallback': {},
  'rotate-signing-key': { table: [signingKeys.getSchedule, signingKeys.saveSchedule], signingKey: 'rotate' },
};

/** The DynamoDB grant of a function: the union of what its operations declare. */
export function tableGrantOf(fn: FunctionName) {
  return unionOfNeeds(FUNCTION_NEEDS[fn].table ?? []);
}

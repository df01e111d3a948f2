import { applicationsInUse, deleteAccount as deleteAccountWith, type DeletionStep } from '#shared/accounts/account-deletion';
import { exportAccount as exportAccountWith } from '#shared/accounts/account-export';
import { confirmIdentity as confirmIdentityWith, type IdentityProof } from '#shared/accounts/confirm-identity';
import { requestPasswordReset as requestPasswordResetWith, sendConfirmation as sendConfirmationWith, signUp as signUpWith } from '#shared/accounts/accounts';
import { subscriptionDeletionItem, type WebhookSubscription } from '#shared/data/webhook-repo';
import type { User } from '#shared/domain/user';
import type { SignInAlert } from '#shared/accounts/sign-in-alert';
import { logger } from '#shared/log';
import { createKeyring } from '#shared/keys/keyring';
import { createKmsKeyStore } from '#shared/keys/kms-keys';
import { kmsSignerSource } from '#shared/keys/kms-signer';
import { createLocalKeyStore } from '#shared/keys/local-signer';
import type { RotationDeps } from '#shared/keys/rotation';
import { createStackStatusReader, type StackStatusReader } from '#shared/aws/stack-status';
import { createClientCache } from '#shared/oauth/client-cache';
import { createTokenService } from '#shared/oauth/token-service';
import { createDispatch } from '#shared/webhooks/dispatch';
import { recordPresence as recordPresenceWith } from '#shared/presence/record-presence';
import { claimDevice as claimDeviceWith, removeDevice as removeDeviceWith, type DeviceCertificates } from '#shared/devices/claiming';
import { preProvision as preProvisionWith } from '#shared/devices/fleet-provisioning';
import { recordReport as recordReportWith } from '#shared/shadow/record-report';
import { syncDesiredState as syncDesiredStateWith } from '#shared/shadow/sync-desired';
import { fanOut as fanOutWith, type StreamRecordLike } from '#shared/webhooks/fan-out';
import { deliverMessage as deliverMessageWith, type DeliveryOutcome } from '#shared/webhooks/deliver';
import { attemptLogin as attemptLoginWith } from '#shared/accounts/login';
import { signInWithPasskey as signInWithPasskeyWith } from '#shared/accounts/passkeys';
import { resetLinkAccount as resetLinkAccountWith, setNewPassword as setNewPasswordWith } from '#shared/accounts/password-reset';
import {
  completeSignIn as completeSignInWith, removalRead as removalReadWith, removeAuthenticator as removeAuthenticatorWith, resetFactorsByOperator as resetFactorsWith,
} from '#shared/accounts/second-factor';
import { decideDeviceRequest as decideDeviceRequestWith, findDeviceRequest as findDeviceRequestWith } from '#shared/oauth/device-approval';
import { authorizedApps as authorizedAppsWith, deleteApplication as deleteApplicationWith, endAppAccess as endAppAccessWith } from '#shared/oauth/app-access';
import { issueCode as issueCodeWith } from '#shared/oauth/authorize-request';
import { revokeToken as revokeTokenWith } from '#shared/oauth/revocation';
import {
  authenticationOptions as authenticationOptionsWith, registerPasskey as registerPasskeyWith, registrationOptions as registrationOptionsWith,
} from '#shared/accounts/passkeys';
import { enrolAuthenticator as enrolAuthenticatorWith } from '#shared/accounts/second-factor';
import { renewRecoveryCodes as renewRecoveryCodesWith } from '#shared/accounts/recovery-codes';
import { registerApp as registerAppWith, revealWebhookSecret as revealWebhookSecretWith, rotateAppSecret as rotateAppSecretWith } from '#shared/console/developer';
import type { WebhookMessage } from '#shared/webhooks/queue';
import { ENV, requireEnv } from '#shared/config';
import {
  allowLocalHttp, audience, batch, claims, clients, deviceGrants, deviceShadows, devices, erasure, factors, factorSummaries, grants, issuer, knownBrowsers, links, localSigningKeyFile,
  mailer, mailLimits, mailSettings, once, onFirstUse, passkeys, presence, queue, recoveryCodes, serials, sessions, shadowReports, signingKeyId, signingKeys, table, throttle,
  users, webhooks,
} from '#shared/runtime-repos';

// The settings, clients and repositories: shared/runtime-repos.ts, the composition root's first half.
export {
  allowLocalHttp, audience, batch, claims, clients, deviceGrants, devices, doc, erasure, factors, grants, issuer, links, mailLimits, outboxDir, passkeys, presence, queue,
  recoveryCodes, relyingParty, serials, sessions, throttle, users, webhooks,
} from '#shared/runtime-repos';

// The composition root: every client, repository and service the functions use is built here, from
// the environment read here (besides it, only the logger and the metrics read their own settings, for
// every layer logs). A handler imports what it uses
// from this file; the services below it are given what they use and read nothing themselves.
//
// One file for all the functions, yet each function's bundle carries only what it uses (docs/design.md,
// "The composition root"):
//  - Every binding is a function declaration or a top-level `const` whose value is an arrow function
//    or a call marked `/* @__PURE__ */` whose arguments are arrow functions: esbuild drops the binding from a bundle that
//    never reads it, and with it what only it reaches (a repository, the KMS, SES or SQS client). An
//    argument that does something (`ENV.tableName`, a call) would keep the whole call: keep such
//    expressions inside the arrows. (package.json's `"sideEffects": false` lets esbuild also drop the
//    modules this file imports for the bindings a bundle does not keep.)
//  - Nothing that needs a required variable is read or built at load. A setting is read where it is
//    used (reading the environment costs nothing worth keeping); what is built from settings is built
//    on first use and kept (`once`, `onFirstUse`). So loading this file never fails, whatever the
//    function lacks, and a missing variable fails the first request that needs it, naming the variable.
//  - The DynamoDB client alone is built at load, in Lambda's init phase: it needs only optional
//    variables and nearly every function uses it on every request. Building it makes no network call.
//
// In Lambda a process runs one function, so everything here is that function's own; the local service
// runs every handler in one process, where they share these objects (one DynamoDB client, one keyring).

// ---- Services ----------------------------------------------------------------------------------

/**
 * The signing keys as the token endpoint and the JWKS read them: the schedule in the table
 * (shared/keys/schedule.ts) over the deployed KMS key and those rotations added (kms:Sign in AWS), or
 * the local key files. No network call at build: a KMS key's id is its `kid`, public keys come on first use.
 */
export const keyring = /* @__PURE__ */ onFirstUse(() => {
  const keyId = signingKeyId();
  return createKeyring({ repo: signingKeys, source: keyId ? kmsSignerSource(keyId) : createLocalKeyStore(localSigningKeyFile()) });
});

/** Starts reading the signing-key schedule if the cached one is stale (token-endpoint.ts, prefetchSigner). */
export const prefetchSigner = (): Promise<unknown> => keyring.currentSigner();

/** The token endpoint's service: the one that signs, and the one that caches client items (client-cache.ts). */
export const tokens = /* @__PURE__ */ onFirstUse(() => createTokenService({
  grants, deviceGrants, signer: () => keyring.currentSigner(), issuer: issuer(), audience: audience(), clientCache: createClientCache(),
}));

/**
 * What the rotation function works on (shared/keys/rotation.ts), made on its first run: the schedule
 * and the key store, KMS (keys created with SIGNING_KEY_POLICY, described with SIGNING_KEY_TAG,
 * aliased under SIGNING_KEY_ALIAS_PREFIX) or the local key files; in AWS also that policy and the
 * status of the stack SIGNING_KEY_STACK_ID names, for the lifecycle (functions/ops/rotate-signing-key.ts).
 */
export const rotationDeps = /* @__PURE__ */ once((): RotationDeps & { stackStatus?: StackStatusReader; keyPolicy?: string } => {
  const keyId = signingKeyId();
  if (!keyId) return { repo: signingKeys, store: createLocalKeyStore(localSigningKeyFile()) };
  const keyPolicy = requireEnv(ENV.signingKeyPolicy);
  return {
    repo: signingKeys,
    store: createKmsKeyStore({
      initialKeyId: keyId, keyPolicy, owner: requireEnv(ENV.signingKeyTag), aliasPrefix: requireEnv(ENV.signingKeyAliasPrefix),
    }),
    keyPolicy,
    stackStatus: createStackStatusReader(requireEnv(ENV.signingKeyStackId)),
  };
});

// Sign-up, e-mail confirmation and the password reset's request (shared/accounts/accounts.ts), each
// with only what it uses, so that a function's bundle carries only the one it calls and its repositories.
export const signUp = (form: Record<string, string>) => signUpWith({ users, links, mailLimits, mailer: mailer(), issuer: issuer() }, form);
export const sendConfirmation = (user: User) => sendConfirmationWith({ links, mailLimits, mailer: mailer(), issuer: issuer() }, user);
export const requestPasswordReset = (email: string) => requestPasswordResetWith({ users, links, mailLimits, mailer: mailer(), issuer: issuer() }, email);

// The developer console's "send again" and "send test event" (shared/webhooks/dispatch.ts).
const dispatch = /* @__PURE__ */ once(() => createDispatch({ webhooks, queue }));
export const redeliver = (clientId: string, webhookId: string) => dispatch().redeliver(clientId, webhookId);
export const sendTestEvent = (clientId: string) => dispatch().sendTestEvent(clientId);

/**
 * E-mails the owner of an account signed in to from a new browser (shared/accounts/sign-in-alert-mail.ts),
 * best effort: the sign-in has happened and stands whatever the mail does; a failure is logged. The
 * message (and its SES client) is a module of its own, loaded on first use (lazyModules of the sign-in functions).
 */
export async function sendSignInAlert(alert: SignInAlert): Promise<void> {
  try {
    const module = new URL(import.meta.url.endsWith('.ts') ? './accounts/sign-in-alert-mail.ts' : './sign-in-alert-mail.mjs', import.meta.url).href;
    const { mailSignInAlert } = (await import(module)) as typeof import('#shared/accounts/sign-in-alert-mail');
    await mailSignInAlert(alert, { issuer: issuer(), mail: mailSettings() });
  } catch (error) {
    logger.warn('sign-in alert not sent', { error: (error as Error).name });
  }
}

/**
 * E-mails the developer of an application whose webhook was disabled. The notice (and its SES client)
 * is a file of its own, loaded on first use: from source, its module beside the webhook services;
 * bundled, disabled-notice.mjs beside the bundle (FunctionDef.lazyModules). The computed specifier
 * keeps esbuild from bundling it.
 */
export async function notifyDisabled(subscription: WebhookSubscription): Promise<void> {
  const notice = new URL(import.meta.url.endsWith('.ts') ? './webhooks/disabled-notice.ts' : './disabled-notice.mjs', import.meta.url).href;
  const { sendDisabledNotice } = (await import(notice)) as typeof import('#shared/webhooks/disabled-notice');
  await sendDisabledNotice(subscription, { clients, users, issuer: issuer(), mail: mailSettings() });
}

// The account's own data (shared/accounts/): the password asked again, the export, the deletion.
export const confirmIdentity = (user: User, proof: IdentityProof) => confirmIdentityWith({ batch, throttle, users }, user, proof);
/** The applications the user develops that other people use: they stop the account's deletion. */
export const appsInUse = (userId: string) => applicationsInUse({ clients, grants }, userId);
export const exportAccount = (user: User, currentSessionId: string | undefined) => exportAccountWith({ batch, devices, grants, clients, erasure, factorSummaries, sessions, mailLimits }, user, currentSessionId);
/**
 * Deletes the account, or finishes its deletion (account-deletion.ts). `afterStep`: the seam where a
 * test stops the deletion after one of its steps, in the local service's process.
 */
export const deleteAccount = (userId: string) => deleteAccountWith({
  erasure, grants, clients, sessions, mailer: mailer(), issuer: issuer(), afterStep: (step) => deletionStepHook?.(step),
  // The webhook repository's one item it needs, without the repository (and its deliveries) in the bundle.
  webhooks: { deleteSubscriptionItem: (clientId) => subscriptionDeletionItem(table(), clientId) },
}, userId);
/** The operator's reset of an account's second factors (`npm run admin -- reset-factors`; shared/accounts/second-factor.ts). */
export const resetFactorsByOperator = (email: string) => resetFactorsWith({ users, factors, passkeys, sessions, mailer: mailer(), issuer: issuer() }, email);
let deletionStepHook: ((step: DeletionStep) => void | Promise<void>) | undefined;
/** Local service and tests only: runs `hook` after each step of every deletion in this process (undefined: none). */
export function onDeletionStep(hook: ((step: DeletionStep) => void | Promise<void>) | undefined): void {
  deletionStepHook = hook;
}

/** What a service takes after its dependencies: the parameters of its binding below. */
type After<Service> = Service extends (deps: never, ...rest: infer Rest) => unknown ? Rest : never;

// The services given their repositories (each declares what it uses: its `*_USES`, shared/data/uses.ts).
export const attemptLogin = (...args: After<typeof attemptLoginWith>) => attemptLoginWith({ batch, factors, knownBrowsers, sessions, throttle, users }, ...args);
export const completeSignIn = (...args: After<typeof completeSignInWith>) => completeSignInWith({ batch, factors, knownBrowsers, sessions, throttle, users }, ...args);
export const signInWithPasskey = (...args: After<typeof signInWithPasskeyWith>) =>
  signInWithPasskeyWith({ batch, knownBrowsers, passkeys, sessions, throttle, users }, ...args);
export const removalRead = (...args: After<typeof removalReadWith>) => removalReadWith({ factors, throttle }, ...args);
export const removeAuthenticator = (...args: After<typeof removeAuthenticatorWith>) => removeAuthenticatorWith({ batch, factors, throttle }, ...args);
export const resetLinkAccount = (...args: After<typeof resetLinkAccountWith>) => resetLinkAccountWith({ links, users }, ...args);
export const setNewPassword = (...args: After<typeof setNewPasswordWith>) => setNewPasswordWith({ grants, links, sessions, users }, ...args);
export const authorizedApps = (...args: After<typeof authorizedAppsWith>) => authorizedAppsWith({ batch, clients, grants }, ...args);
export const deleteApplication = (...args: After<typeof deleteApplicationWith>) => deleteApplicationWith({ grants, clients, webhooks }, ...args);
export const endAppAccess = (...args: After<typeof endAppAccessWith>) => endAppAccessWith(grants, ...args);
export const issueCode = (...args: After<typeof issueCodeWith>) => issueCodeWith(grants, ...args);
export const revokeToken = (...args: After<typeof revokeTokenWith>) => revokeTokenWith(grants, ...args);
export const registrationOptions = (...args: After<typeof registrationOptionsWith>) => registrationOptionsWith(passkeys, ...args);
export const authenticationOptions = (...args: After<typeof authenticationOptionsWith>) => authenticationOptionsWith(passkeys, ...args);
export const registerPasskey = (...args: After<typeof registerPasskeyWith>) => registerPasskeyWith(passkeys, ...args);
export const enrolAuthenticator = (...args: After<typeof enrolAuthenticatorWith>) => enrolAuthenticatorWith(factors, ...args);
export const renewRecoveryCodes = (...args: After<typeof renewRecoveryCodesWith>) => renewRecoveryCodesWith(recoveryCodes, ...args);
export const registerApp = (...args: After<typeof registerAppWith>) => registerAppWith(clients, ...args);
export const rotateAppSecret = (...args: After<typeof rotateAppSecretWith>) => rotateAppSecretWith(clients, ...args);
export const revealWebhookSecret = (...args: After<typeof revealWebhookSecretWith>) => revealWebhookSecretWith(clients, ...args);
export const findDeviceRequest = (...args: After<typeof findDeviceRequestWith>) => findDeviceRequestWith({ deviceGrants, batch, clients, grants }, ...args);
export const decideDeviceRequest = (...args: After<typeof decideDeviceRequestWith>) => decideDeviceRequestWith({ deviceGrants, batch, clients, grants }, ...args);
/** A device's lifecycle event recorded as its presence (shared/presence/record-presence.ts). */
export const recordPresence = (event: unknown) => recordPresenceWith(event, { devices, presence, logger });
/** A device's report from its shadow recorded on its item (shared/shadow/record-report.ts). */
export const recordReport = (documents: unknown) => recordReportWith(documents, { devices, shadowReports, logger });
/** A batch of the table's stream: the owners' commands written to their devices' shadows (shared/shadow/sync-desired.ts). */
export const syncDesiredState = (records: readonly StreamRecordLike[]) => syncDesiredStateWith(records, { shadows: deviceShadows, certificates: deviceCertificates, logger });
/** A batch of the table's stream turned into webhook deliveries (shared/webhooks/fan-out.ts): how many were queued. */
export const fanOut = (records: readonly StreamRecordLike[]) => fanOutWith(records, { grants, webhooks, batch, queue });
/** One queued webhook message delivered (shared/webhooks/deliver.ts), its `attempt`-th time. */
export const deliverMessage = (message: WebhookMessage, attempt: number): Promise<DeliveryOutcome> =>
  deliverMessageWith(message, attempt, { batch, webhooks, grants, allowLocalHttp: allowLocalHttp(), notifyDisabled });

/**
 * IoT Core's device certificates (shared/aws/iot-certificates.ts): the module and its IoT client are
 * loaded on the first deactivation, from source its file, bundled iot-certificates.mjs beside the
 * bundle (the remove function's lazyModules): most removals, of devices without a certificate, never load it.
 */
const deviceCertificates = (): DeviceCertificates => ({
  deactivate: async (certificateId) => ((await import(new URL(import.meta.url.endsWith('.ts') ? './aws/iot-certificates.ts' : './iot-certificates.mjs', import.meta.url).href)) as
    typeof import('#shared/aws/iot-certificates')).deactivateCertificate(certificateId),
});
/** A claim code entered on the account's device page (shared/devices/claiming.ts). */
export const claimDevice = (...args: After<typeof claimDeviceWith>) => claimDeviceWith({ claims }, ...args);
/** A device removed from the user's account and freed, its certificate deactivated (shared/devices/claiming.ts). */
export const removeDevice = (...args: After<typeof removeDeviceWith>) => removeDeviceWith({ grants, claims, certificates: deviceCertificates }, ...args);
/** Fleet provisioning's pre-provisioning hook: a device's serial checked against the allow-list (shared/devices/fleet-provisioning.ts). */
export const preProvision = (event: unknown) => preProvisionWith({ serials, devices, warn: (message, facts) => logger.warn(message, facts) }, event);

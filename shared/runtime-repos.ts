import { AWS_ENV, ENV, MAIL_ENV, optionalEnv, requireEnv, SHADOW_ENV, WEBHOOK_ENV } from '#shared/config';
import { createBatchReader } from '#shared/data/batch-read';
import { createClaimRepo } from '#shared/data/claim-repo';
import { createSerialRepo } from '#shared/data/serial-repo';
import { createClientRepo } from '#shared/data/client-repo';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createFactorRepo } from '#shared/data/factor-repo';
import { createRecoveryCodeRepo } from '#shared/data/recovery-code-repo';
import { createPasskeyRepo } from '#shared/data/passkey-repo';
import { createPresenceRepo } from '#shared/data/presence-repo';
import { createShadowRepo } from '#shared/data/shadow-repo';
import { iotDeviceShadows } from '#shared/shadow/device-shadows';
import { relyingPartyOf, type RelyingParty } from '#shared/accounts/relying-party';
import { SERVICE_NAME } from '#shared/views/theme';
import { createDocumentClient, type RepoDeps } from '#shared/data/dynamodb';
import { createDeviceGrantRepo } from '#shared/data/device-grant-repo';
import { createErasureRepo } from '#shared/data/erasure-repo';
import { createFactorSummaryRepo } from '#shared/data/factor-summary-repo';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createLinkRepo } from '#shared/data/link-repo';
import { createMailLimitRepo } from '#shared/data/mail-limit-repo';
import { createSessionRepo } from '#shared/data/session-repo';
import { createSigningKeyRepo } from '#shared/data/signing-key-repo';
import { createThrottleRepo } from '#shared/data/throttle-repo';
import { createKnownBrowserRepo } from '#shared/data/known-browser-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { createMailer, type MailSettings } from '#shared/email/create-mailer';
import { sqsWebhookQueue } from '#shared/webhooks/queue';
import { createWebhookRepo } from '#shared/data/webhook-repo';

// The composition root's first half (shared/runtime.ts is the other, and says the rules both keep):
// the settings read where they are used, the clients, and every repository, each built on first use.

/** What `make` returns, made on first call and kept (a throw, such as a missing variable, is not). */
export function once<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}

/**
 * The object `build` makes, built when one of its members is first read, then kept: handlers use it
 * as the object itself (`users.getUserById(id)`). Its members are read, never listed.
 */
export function onFirstUse<T extends object>(build: () => T): T {
  let built: T | undefined;
  return new Proxy({} as T, { get: (_, member) => Reflect.get((built ??= build()), member) });
}

// ---- Settings ----------------------------------------------------------------------------------

/** The issuer of access tokens: the authorization server's base URL. */
export const issuer = () => requireEnv(ENV.issuer);
/** The audience of access tokens: the resource API's base URL. */
export const audience = () => requireEnv(ENV.audience);
/** Local service only: webhook receivers may be `http://localhost` (checkWebhookUrl's allowLocalHttp). */
export const allowLocalHttp = () => optionalEnv(WEBHOOK_ENV.allowLocalHttp) === 'true';
/** The local outbox's folder, which GET /outbox lists (local only). */
export const outboxDir = () => requireEnv(MAIL_ENV.outboxDir);

export const region = () => optionalEnv(AWS_ENV.region);
export const table = () => requireEnv(ENV.tableName);
/** The deployed KMS key of the token signer (AWS); absent locally, where the keys are files. */
export const signingKeyId = () => optionalEnv(ENV.signingKeyId);
export const localSigningKeyFile = () => requireEnv(ENV.localSigningKeyFile);
/** The local outbox when OUTBOX_DIR is set, else SES from MAIL_FROM with MAIL_CONFIGURATION_SET. */
export const mailSettings = (): MailSettings => {
  const outbox = optionalEnv(MAIL_ENV.outboxDir);
  return outbox ? { outboxDir: outbox } : { sender: requireEnv(MAIL_ENV.sender), configurationSet: optionalEnv(MAIL_ENV.configurationSet) };
};

// ---- Clients -----------------------------------------------------------------------------------

/** The process's one DynamoDB document client; DynamoDB Local's when DYNAMODB_ENDPOINT is set. */
export const doc = /* @__PURE__ */ newDocumentClient();

function newDocumentClient() {
  return createDocumentClient({ endpoint: optionalEnv(ENV.dynamodbEndpoint), region: region() });
}

/** The webhook delivery queue (SQS); with WEBHOOK_SQS_ENDPOINT, the local queue stand-in. */
export const queue = /* @__PURE__ */ onFirstUse(() => sqsWebhookQueue(requireEnv(WEBHOOK_ENV.queueUrl), optionalEnv(WEBHOOK_ENV.sqsEndpoint), region()));

/** The devices' shadows (IoT Core's data plane); with IOT_DATA_ENDPOINT, the local stand-in. */
export const deviceShadows = /* @__PURE__ */ onFirstUse(() => iotDeviceShadows(optionalEnv(SHADOW_ENV.dataEndpoint), region()));

/** Account e-mail: the local outbox, or SES (its client built with it). */
export const mailer = /* @__PURE__ */ once(() => createMailer(mailSettings()));

// ---- Repositories (shared/data/) ---------------------------------------------------------------

export const tableDeps = /* @__PURE__ */ once((): RepoDeps => ({ doc, table: table() }));

export const batch = /* @__PURE__ */ onFirstUse(() => createBatchReader(tableDeps()));
export const users = /* @__PURE__ */ onFirstUse(() => createUserRepo(tableDeps()));
export const devices = /* @__PURE__ */ onFirstUse(() => createDeviceRepo(tableDeps()));
export const presence = /* @__PURE__ */ onFirstUse(() => createPresenceRepo(tableDeps()));
/** Devices changing hands: claim codes, unclaimed devices, claims and removals. */
export const claims = /* @__PURE__ */ onFirstUse(() => createClaimRepo(tableDeps()));
/** The factory's allow-list of serial numbers (fleet provisioning by claim). */
export const serials = /* @__PURE__ */ onFirstUse(() => createSerialRepo(tableDeps()));
export const shadowReports = /* @__PURE__ */ onFirstUse(() => createShadowRepo(tableDeps()));
export const clients = /* @__PURE__ */ onFirstUse(() => createClientRepo(tableDeps()));
export const grants = /* @__PURE__ */ onFirstUse(() => createGrantRepo(tableDeps()));
/** The device authorization grant's items (RFC 8628): the token endpoint's polls and the /device page. */
export const deviceGrants = /* @__PURE__ */ onFirstUse(() => createDeviceGrantRepo(tableDeps()));
export const sessions = /* @__PURE__ */ onFirstUse(() => createSessionRepo(tableDeps()));
/** Second factors (authenticator app, recovery codes) and the sign-ins waiting for one. */
export const factors = /* @__PURE__ */ onFirstUse(() => createFactorRepo(tableDeps()));
/** New recovery codes of an account whose two-step sign-in stays on. */
export const recoveryCodes = /* @__PURE__ */ onFirstUse(() => createRecoveryCodeRepo(tableDeps()));
/** Passkeys and their WebAuthn challenges. */
export const passkeys = /* @__PURE__ */ onFirstUse(() => createPasskeyRepo(tableDeps()));
/** The passkeys' relying party: the issuer's host (its custom domain, when it has one) and origin. */
export const relyingParty = (): RelyingParty => relyingPartyOf(issuer(), SERVICE_NAME);
export const throttle = /* @__PURE__ */ onFirstUse(() => createThrottleRepo(tableDeps()));
export const knownBrowsers = /* @__PURE__ */ onFirstUse(() => createKnownBrowserRepo(tableDeps()));
export const links = /* @__PURE__ */ onFirstUse(() => createLinkRepo(tableDeps()));
export const mailLimits = /* @__PURE__ */ onFirstUse(() => createMailLimitRepo(tableDeps()));
/** Webhook subscriptions and deliveries (the developer console and the webhook pipeline). */
export const webhooks = /* @__PURE__ */ onFirstUse(() => createWebhookRepo(tableDeps()));
export const signingKeys = /* @__PURE__ */ onFirstUse(() => createSigningKeyRepo(tableDeps()));
/** What an account's export and deletion read and delete beyond the other repositories. */
export const erasure = /* @__PURE__ */ onFirstUse(() => createErasureRepo(tableDeps()));
export const factorSummaries = /* @__PURE__ */ onFirstUse(() => createFactorSummaryRepo(tableDeps()));


import { randomBytes } from 'node:crypto';
import type { LocalCa } from '#local/iot-ca';
import type { IotRegistry } from '#local/iot-registry';

// The local stand-in of AWS IoT Core's fleet provisioning by claim ("Device provisioning MQTT API" in
// the AWS IoT Core Developer Guide), for the broker of local/iot-broker.ts: a claim certificate may
// ask for a certificate of its own (CreateKeysAndCertificate) and register it with the template
// (RegisterThing), which runs the template's pre-provisioning hook (what the caller hands as
// `preProvisioningHook`, e.g. local/iot-rules.ts) and, when the hook allows it, attaches the new
// certificate to the thing the hook names, so that the device can connect as that thing. JSON
// payloads only (the API's `json` format).

/** The name the local provisioning template goes by (in AWS: the stack's `FleetTemplateName` output). */
export const LOCAL_FLEET_TEMPLATE = 'device-fleet';
const CREATE = '$aws/certificates/create/json';
const PROVISION = `$aws/provisioning-templates/${LOCAL_FLEET_TEMPLATE}/provision/json`;
/** How long a certificate ownership token is good for (AWS: one hour). */
const TOKEN_LIFETIME_MS = 3_600_000;

/** The hook's answer, as the pre-provision-device function returns it. */
export interface HookAnswer {
  allowProvisioning: boolean;
  parameterOverrides?: Record<string, string>;
}

/** One request of a claim connection, and where its answer goes (that connection only, as IoT Core answers). */
export interface FleetRequest {
  clientId: string;
  claimCertificateId: string;
  topic: string;
  payload: Buffer;
  reply(topic: string, payload: unknown): void;
}

/** What the broker asks of the stand-in. */
export interface FleetStandIn {
  /** Whether `certificateId` is a claim certificate's (it may connect with any client id, to use this API only). */
  isClaim(certificateId: string): boolean;
  /** The thing provisioning attached `certificateId` to, if it did (where `registry` records it, when there is one). */
  thingOf(certificateId: string): string | undefined;
  /** Whether a claim connection may publish (`publish`) to, or subscribe to, `topic`: the API's request and response topics only (the claim policy). */
  allows(topic: string, publish: boolean): boolean;
  handle(request: FleetRequest): Promise<void>;
}

export interface FleetOptions {
  ca: LocalCa;
  /** The claim certificates' ids (what the factory's batch certificate is). */
  claimCertificates: ReadonlySet<string>;
  preProvisioningHook(input: unknown): Promise<HookAnswer>;
  /**
   * The registry stand-in (local/iot-registry.ts), the one record of which thing a certificate is
   * attached to, where RegisterThing attaches the template's certificate; without one (a broker with
   * fleet provisioning only), the stand-in keeps that record itself.
   */
  registry?: Pick<IotRegistry, 'attach' | 'thingOf'>;
  now?: () => number;
}

/** The fleet provisioning stand-in, with no certificate issued yet. */
export function createFleetStandIn(options: FleetOptions): FleetStandIn {
  const now = options.now ?? Date.now;
  const issued = new Map<string, { certificateId: string; certificatePem: string; expires: number }>();
  const things = options.registry ?? ownAttachments();

  async function createKeysAndCertificate(request: FleetRequest) {
    // The certificate names no thing: it is of no use until RegisterThing attaches it to one.
    const creds = await options.ca.issue(`pending-${randomBytes(8).toString('hex')}`);
    const token = randomBytes(32).toString('base64url');
    issued.set(token, { certificateId: creds.certificateId, certificatePem: creds.certPem, expires: now() + TOKEN_LIFETIME_MS });
    request.reply(`${CREATE}/accepted`, {
      certificateId: creds.certificateId, certificatePem: creds.certPem, privateKey: creds.keyPem, certificateOwnershipToken: token,
    });
  }

  async function registerThing(request: FleetRequest) {
    const reject = (statusCode: number, errorCode: string, errorMessage: string) =>
      request.reply(`${PROVISION}/rejected`, { statusCode, errorCode, errorMessage });
    let body: { certificateOwnershipToken?: unknown; parameters?: unknown };
    try {
      body = JSON.parse(request.payload.toString('utf8')) as typeof body;
    } catch {
      return reject(400, 'InvalidPayload', 'The request is not JSON.');
    }
    const token = typeof body?.certificateOwnershipToken === 'string' ? body.certificateOwnershipToken : '';
    const certificate = issued.get(token);
    if (!certificate || certificate.expires < now()) return reject(400, 'InvalidCertificateOwnershipToken', 'The certificate ownership token is not valid.');
    const parameters = body.parameters ?? {};
    if (typeof parameters !== 'object' || Array.isArray(parameters) || !Object.values(parameters).every((v) => typeof v === 'string')) {
      return reject(400, 'InvalidParameters', 'Parameters must be an object of strings.');
    }
    const answer = await options.preProvisioningHook({
      claimCertificateId: request.claimCertificateId, certificateId: certificate.certificateId, certificatePem: certificate.certificatePem,
      templateArn: `arn:aws:iot:local:000000000000:provisioningtemplate/${LOCAL_FLEET_TEMPLATE}`, clientId: request.clientId, parameters,
    }).catch(() => ({ allowProvisioning: false }) as HookAnswer);
    if (answer.allowProvisioning !== true) return reject(403, 'AccessDenied', 'The pre-provisioning hook refused the request.');
    const thingName = { ...(parameters as Record<string, string>), ...answer.parameterOverrides }.ThingName;
    if (!thingName) return reject(400, 'InvalidParameters', 'The template names the thing by its ThingName parameter.');
    issued.delete(token);
    things.attach(certificate.certificateId, thingName);
    request.reply(`${PROVISION}/accepted`, { deviceConfiguration: {}, thingName });
  }

  return {
    isClaim: (certificateId) => options.claimCertificates.has(certificateId),
    thingOf: (certificateId) => things.thingOf(certificateId),
    allows(topic, publish) {
      if (publish) return topic === CREATE || topic === PROVISION;
      return [CREATE, PROVISION].some((api) => topic.startsWith(`${api}/`));
    },
    async handle(request) {
      if (request.topic === CREATE) await createKeysAndCertificate(request);
      else if (request.topic === PROVISION) await registerThing(request);
    },
  };
}

/** Which thing each certificate is attached to, for a stand-in without the registry's. */
function ownAttachments(): Pick<IotRegistry, 'attach' | 'thingOf'> {
  const attached = new Map<string, string>();
  return { attach: (certificateId, thing) => void attached.set(certificateId, thing), thingOf: (certificateId) => attached.get(certificateId) };
}

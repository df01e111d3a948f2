import { Token } from 'aws-cdk-lib';

// The optional deployment settings, each a CDK context value (`-c name=value`). A malformed value,
// or one that makes no sense without another, stops synthesis with a message naming it: a typo must
// never deploy something else (an empty `domain` would silently move the issuer back to the
// execute-api URL, so an empty value is malformed, not absent).

/** A missing or malformed deployment setting: the app prints its message alone and stops. */
export class StackConfigurationError extends Error {
  override name = 'StackConfigurationError';
}

export const SERVICE_NAME = 'DeviceUserService';
export const STAGE_CONTEXT = 'stage';
export const DOMAIN_CONTEXT = 'domain';
export const HOSTED_ZONE_ID_CONTEXT = 'hostedZoneId';
export const HOSTED_ZONE_NAME_CONTEXT = 'hostedZoneName';
export const CERTIFICATE_ARN_CONTEXT = 'certificateArn';

export interface Stage {
  /** The `stage` context value; undefined for the stack deployed before stages existed. */
  name: string | undefined;
  /** `DeviceUserService-<stage>`, or `DeviceUserService` without a stage. */
  stackName: string;
  /**
   * Whether the table and the signing key outlive the stack, with deletion and termination
   * protection on: everything but a `dev…` stage. A misspelt or new stage keeps its data.
   */
  keepsData: boolean;
}

/** The stage from the context value `stage`: lowercase letters and digits, at most 12. */
export function serviceStage(value: unknown): Stage {
  if (value === undefined) return { name: undefined, stackName: SERVICE_NAME, keepsData: true };
  if (typeof value !== 'string' || !/^[a-z0-9]{1,12}$/.test(value)) {
    throw malformed(STAGE_CONTEXT, 'a stage name of 1 to 12 lowercase letters or digits, such as dev or prod', value);
  }
  return { name: value, stackName: `${SERVICE_NAME}-${value}`, keepsData: !value.startsWith('dev') };
}

export interface CustomDomainSettings {
  /** `auth.<domain>`: the authorization server, whose URL is the access tokens' issuer. */
  authHost: string;
  /** `api.<domain>`: the resource API, whose URL is the access tokens' audience. */
  apiHost: string;
  /** The Route 53 zone that gets the alias records (and the certificate's validation records). */
  hostedZone?: { id: string; name: string };
  /** An ACM certificate for both hosts, in the stack's region; without it the stack requests one. */
  certificateArn?: string;
}

// Lowercase only: the issuer is compared as a string, and DNS names are not case-sensitive.
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const DNS_NAME = new RegExp(`^(?=.{1,248}$)(?:${LABEL}\\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])$`);
const HOSTED_ZONE_ID = /^Z[0-9A-Z]{4,31}$/;
const CERTIFICATE_ARN = /^arn:aws(?:-[a-z]+)*:acm:([a-z]{2}(?:-[a-z]+)+-\d):\d{12}:certificate\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The custom domains from the context values `domain` with `hostedZoneId` (and `hostedZoneName`
 * when the zone is a parent of the domain) and/or `certificateArn`; undefined when none is given.
 * `region` is the stack's, when known, to check that the certificate is in it.
 */
export function customDomainSettings(context: (name: string) => unknown, region: string): CustomDomainSettings | undefined {
  const domain = context(DOMAIN_CONTEXT);
  const zoneId = context(HOSTED_ZONE_ID_CONTEXT);
  const zoneName = context(HOSTED_ZONE_NAME_CONTEXT);
  const certificateArn = context(CERTIFICATE_ARN_CONTEXT);
  if (domain === undefined) {
    const stray = [HOSTED_ZONE_ID_CONTEXT, HOSTED_ZONE_NAME_CONTEXT, CERTIFICATE_ARN_CONTEXT].find((name) => context(name) !== undefined);
    if (stray) {
      throw new StackConfigurationError(`The CDK context value '${stray}' needs '${DOMAIN_CONTEXT}' too: it serves the custom domains `
        + `api.<domain> and auth.<domain>. For example: ${EXAMPLE}`);
    }
    return undefined;
  }
  if (typeof domain !== 'string' || !DNS_NAME.test(domain)) {
    throw malformed(DOMAIN_CONTEXT, 'a lowercase DNS name without scheme, port or trailing dot, such as example.com (the APIs get api.<domain> and auth.<domain>)', domain);
  }
  const settings: CustomDomainSettings = { authHost: `auth.${domain}`, apiHost: `api.${domain}` };
  if (zoneId !== undefined) {
    if (typeof zoneId !== 'string' || !HOSTED_ZONE_ID.test(zoneId)) {
      throw malformed(HOSTED_ZONE_ID_CONTEXT, 'a Route 53 hosted zone id such as Z0123456789ABCDEFGHIJ (without /hostedzone/)', zoneId);
    }
    const name = zoneName ?? domain;
    if (typeof name !== 'string' || !DNS_NAME.test(name) || !(domain === name || domain.endsWith(`.${name}`))) {
      throw malformed(HOSTED_ZONE_NAME_CONTEXT, `the name of the hosted zone '${HOSTED_ZONE_ID_CONTEXT}', ${domain} or a parent of it, lowercase, without trailing dot`, name);
    }
    settings.hostedZone = { id: zoneId, name };
  } else if (zoneName !== undefined) {
    throw new StackConfigurationError(`The CDK context value '${HOSTED_ZONE_NAME_CONTEXT}' needs '${HOSTED_ZONE_ID_CONTEXT}' too `
      + `(the stack does not look zones up, so that synth works offline). For example: ${EXAMPLE}`);
  }
  if (certificateArn !== undefined) {
    const match = typeof certificateArn === 'string' ? CERTIFICATE_ARN.exec(certificateArn) : null;
    if (!match) {
      throw malformed(CERTIFICATE_ARN_CONTEXT, 'the ARN of an ACM certificate, arn:aws:acm:<region>:<account>:certificate/<uuid>', certificateArn);
    }
    if (!Token.isUnresolved(region) && match[1] !== region) {
      throw malformed(CERTIFICATE_ARN_CONTEXT, `a certificate in the stack's region ${region} (custom domains of HTTP APIs are regional)`, certificateArn);
    }
    settings.certificateArn = match[0];
  }
  if (!settings.hostedZone && !settings.certificateArn) {
    throw new StackConfigurationError(`The CDK context value '${DOMAIN_CONTEXT}' needs '${HOSTED_ZONE_ID_CONTEXT}' (a Route 53 zone the stack `
      + `writes the records and certificate validation to) or '${CERTIFICATE_ARN_CONTEXT}' (an ACM certificate for api.${domain} and auth.${domain}; `
      + `you then point both names at the outputs yourself). For example: ${EXAMPLE}`);
  }
  return settings;
}

const EXAMPLE = `npx cdk deploy -c ${DOMAIN_CONTEXT}=example.com -c ${HOSTED_ZONE_ID_CONTEXT}=Z0123456789ABCDEFGHIJ`;

function malformed(name: string, what: string, value: unknown): StackConfigurationError {
  return new StackConfigurationError(`The CDK context value '${name}' must be ${what}; got ${JSON.stringify(value)}.`);
}

/** A plain address (no display name): name@domain with a dotted domain. */
export const EMAIL_ADDRESS = /^(?!\.)(?!.*\.\.)[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}(?<!\.)@(?=.{4,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

/** The CDK context value naming who is e-mailed when an alarm fires: `-c alarmEmail=<address>`. Optional. */
export const ALARM_EMAIL_CONTEXT = 'alarmEmail';
/** The CDK context value that turns on AWS X-Ray active tracing of every function: `-c tracing=true`. Optional. */
export const TRACING_CONTEXT = 'tracing';

/** The alarm topic's e-mail subscriber, if any: absent or empty means none; anything else must be a plain address. */
export function alarmEmail(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !EMAIL_ADDRESS.test(value)) {
    throw new StackConfigurationError(`The CDK context value '${ALARM_EMAIL_CONTEXT}' must be a plain e-mail address (name@domain, no display name), `
      + `which the alarm topic e-mails; got ${JSON.stringify(value)}. For example: npx cdk deploy -c ${ALARM_EMAIL_CONTEXT}=oncall@your-domain.example`);
  }
  return value;
}

/** Active tracing on or off: `true` or `false` (a string from the command line, or a boolean from cdk.json); absent means off. */
export function tracingEnabled(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === false || value === 'false') return false;
  if (value === true || value === 'true') return true;
  throw new StackConfigurationError(`The CDK context value '${TRACING_CONTEXT}' must be true or false; got ${JSON.stringify(value)}. `
    + `For example: npx cdk deploy -c ${TRACING_CONTEXT}=true`);
}

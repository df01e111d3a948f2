/** A missing or malformed deployment setting: the app prints its message alone and stops. */
export class StackConfigurationError extends Error {
  override name = 'StackConfigurationError';
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

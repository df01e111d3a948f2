import { logger } from '#shared/log';
import { rotationDeps } from '#shared/runtime';
import {
  applyKeyPolicies, initSigningKeys, rotateSigningKeys, tearDownSigningKeys, type RotationDeps, type RotationOptions, type RotationOutcome,
} from '#shared/keys/rotation';
import { STACK_BEING_DELETED, type StackStatusReader } from '#shared/aws/stack-status';

/** What the invoker sends: the EventBridge schedule `{"mode":"when-due"}`, the operator `{"mode":"now"}` or `{"mode":"report"}`. */
export interface RotationEvent {
  mode?: 'now' | 'when-due' | 'report';
}

/**
 * What CloudFormation sends for the stack's signing-key lifecycle resource
 * (infra/constructs/signing-key-lifecycle.ts): through the stack's lifecycle topic, whose message is
 * this JSON, or (a resource deployed by an earlier version, on its way out) straight to this function.
 */
export interface LifecycleEvent {
  RequestType: 'Create' | 'Update' | 'Delete';
  /** A pre-signed S3 URL that takes the answer (a PUT of the JSON below). */
  ResponseURL: string;
  StackId: string;
  RequestId: string;
  LogicalResourceId: string;
  PhysicalResourceId?: string;
  ResourceProperties: {
    TeardownOnDelete?: string;
    /** The rotated keys' key policy of this deployment (SIGNING_KEY_POLICY): its change (a role replaced) makes an Update. */
    RotatedKeyPolicy?: string;
  };
}

/** How Amazon SNS invokes a subscribed function: the custom resource's request is each record's message. */
export interface SnsEvent {
  Records: { EventSource?: string; Sns: { Message: string } }[];
}

/** The answer CloudFormation expects at the ResponseURL (CloudFormation User Guide, "Custom resource response objects"). */
export interface LifecycleResponse {
  Status: 'SUCCESS' | 'FAILED';
  Reason?: string;
  PhysicalResourceId: string;
  StackId: string;
  RequestId: string;
  LogicalResourceId: string;
  Data?: Record<string, string>;
}

export interface RotationHandlerDeps extends RotationDeps {
  /** Sends the lifecycle answer; by default a PUT to the URL (tests catch it on a local server). */
  respond?: (url: string, response: LifecycleResponse) => Promise<void>;
  /**
   * The status of the stack this function belongs to (SIGNING_KEY_STACK_ID): the lifecycle tears
   * down only while it is DELETE_IN_PROGRESS, and a closed schedule is an error while it is not.
   * Without it (the local service) the stack is taken to live.
   */
  stackStatus?: StackStatusReader;
  /**
   * The rotated keys' key policy this function applies (SIGNING_KEY_POLICY). A Create or Update
   * naming another one is for another copy of the function (both are subscribed to the topic while
   * CloudFormation moves it): this one leaves it to that copy and does not answer; during a rollback
   * it answers SUCCESS without changing anything, and its next hourly step applies the policy it then has.
   */
  keyPolicy?: string;
}

/** PUT of the answer to CloudFormation's pre-signed URL: an empty content type, as the URL was signed without one. */
async function putResponse(url: string, response: LifecycleResponse): Promise<void> {
  const body = JSON.stringify(response);
  const answer = await fetch(url, { method: 'PUT', headers: { 'content-type': '', 'content-length': String(Buffer.byteLength(body)) }, body });
  if (!answer.ok) throw new Error(`CloudFormation's response URL answered ${answer.status}`);
}

function isLifecycleEvent(event: unknown): event is LifecycleEvent {
  return typeof event === 'object' && event !== null && 'RequestType' in event && 'ResponseURL' in event;
}

function isSnsEvent(event: unknown): event is SnsEvent {
  return typeof event === 'object' && event !== null && Array.isArray((event as SnsEvent).Records);
}

/** Whether the stack is being deleted; a status that cannot be read counts as a living stack (nothing is torn down on a guess). */
async function stackBeingDeleted(deps: RotationHandlerDeps): Promise<{ deleting: boolean; status: string }> {
  if (!deps.stackStatus) return { deleting: false, status: 'unknown (no stack)' };
  const status = await deps.stackStatus();
  return { deleting: status === STACK_BEING_DELETED, status };
}

/** What a step returns (and logs): the key ids and each key's phase and times. */
export type RotationSummary = ReturnType<typeof summarize>;

function summarize(mode: string, outcome: RotationOutcome) {
  return {
    mode,
    introduced: outcome.introduced?.kid ?? null,
    awaitingPublication: outcome.awaiting?.kid ?? null,
    deleted: outcome.deleted.map((key) => key.kid),
    ...(outcome.closed ? { closed: true } : {}),
    keys: outcome.keys.map(({ key, phase }) => ({
      kid: key.kid, phase, activateAt: new Date(key.activateAt * 1000).toISOString(),
      retireAt: key.retireAt === undefined ? null : new Date(key.retireAt * 1000).toISOString(),
    })),
  };
}

/**
 * The signing-key rotation (shared/keys/rotation.ts), run hourly by an EventBridge rule and on
 * demand by the operator (`aws lambda invoke`): deletes retired keys, publishes a key created earlier
 * once KMS gives its public key, creates the next key when due (every 90 days, or now), and points
 * the aliases `…-current` and `…-next`. A step that finds the schedule closed (torn down) while the
 * stack is not being deleted throws, so that the failure alarms instead of passing for success. No
 * HTTP route. CloudFormation invokes it too, for the stack's lifecycle resource (through the
 * lifecycle topic): on Create and Update the deployment's step (initSigningKeys, which also gives
 * every rotated key the current key policy), on Delete, for a stage that keeps no data and only while
 * the stack itself is DELETE_IN_PROGRESS, the teardown (tearDownSigningKeys); a Delete of a rollback,
 * of a replacement or of a resource leaving the template changes nothing. It always answers
 * CloudFormation, with FAILED and the error when the work failed, and keeps the resource's physical
 * id, so that an update never looks like a replacement.
 */
export function createRotationHandler(deps: () => RotationHandlerDeps) {
  async function handler(event?: RotationEvent): Promise<RotationSummary>;
  async function handler(event: LifecycleEvent): Promise<LifecycleResponse | undefined>;
  async function handler(event: SnsEvent): Promise<(LifecycleResponse | undefined)[]>;
  async function handler(event: RotationEvent | LifecycleEvent | SnsEvent = {}) {
    if (isSnsEvent(event)) {
      const answers: (LifecycleResponse | undefined)[] = [];
      for (const record of event.Records) answers.push(await lifecycle(JSON.parse(record.Sns.Message) as LifecycleEvent, deps()));
      return answers;
    }
    if (isLifecycleEvent(event)) return lifecycle(event, deps());
    const mode: RotationOptions['mode'] = event.mode === 'now' || event.mode === 'report' ? event.mode : 'when-due';
    // Every step puts the current policy on the rotated keys again: what a lifecycle request this copy
    // could not act on (a rollback, below) left behind is mended within the hour.
    if (mode !== 'report') await applyKeyPolicies(deps());
    const outcome = await rotateSigningKeys(deps(), { mode });
    const summary = summarize(mode, outcome);
    if (outcome.closed && mode !== 'report') {
      const { deleting, status } = await stackBeingDeleted(deps());
      if (!deleting) {
        throw new Error(`The signing-key schedule is closed (torn down) but the stack is ${status}: no key rotates and the rotated keys are `
          + 'pending deletion. See docs/operations.md, "A closed signing-key schedule".');
      }
    }
    logger.info('signing-key rotation step', summary);
    return summary;
  }
  return handler;
}

async function lifecycle(event: LifecycleEvent, deps: RotationHandlerDeps): Promise<LifecycleResponse | undefined> {
  const physicalId = event.PhysicalResourceId ?? `signing-keys-${event.StackId.split('/').pop() ?? event.RequestId}`;
  const base = { PhysicalResourceId: physicalId, StackId: event.StackId, RequestId: event.RequestId, LogicalResourceId: event.LogicalResourceId };
  const proposed = event.ResourceProperties.RotatedKeyPolicy;
  const othersPolicy = event.RequestType !== 'Delete' && proposed !== undefined && deps.keyPolicy !== undefined && proposed !== deps.keyPolicy;
  let response: LifecycleResponse;
  try {
    if (othersPolicy) {
      // Never a policy from the request: whoever may publish to the topic would choose who signs.
      // While CloudFormation moves the function, the other copy has that policy and answers; while it
      // rolls an update back, this copy's policy is the one being undone: the roles return with the
      // nested stacks, and the next hourly step puts their policy on the keys.
      const status = deps.stackStatus ? await deps.stackStatus() : 'unknown (no stack)';
      if (!status.startsWith('UPDATE_ROLLBACK') && !status.startsWith('ROLLBACK')) {
        logger.info('signing-key lifecycle request for another copy of this function: left to it', { requestType: event.RequestType, stackStatus: status });
        return undefined;
      }
      logger.warn('signing-key lifecycle rollback to another key policy: the next hourly step applies it', { stackStatus: status });
    } else if (event.RequestType === 'Delete') {
      // A Delete also comes with a rollback, a replacement and a resource leaving the template: only
      // the stack's own status says that the stack is going.
      const { deleting, status } = event.ResourceProperties.TeardownOnDelete === 'true' ? await stackBeingDeleted(deps) : { deleting: false, status: 'kept' };
      if (deleting) {
        const { deleted } = await tearDownSigningKeys(deps);
        logger.info('signing keys torn down', { deleted });
      } else {
        logger.info('signing keys kept: the stack is not being deleted, or its stage keeps its data', { stackStatus: status });
      }
    } else {
      const { policiesApplied, ...outcome } = await initSigningKeys(deps);
      logger.info('signing-key deployment step', { ...summarize('init', outcome), keyPoliciesApplied: policiesApplied.length });
    }
    response = { Status: 'SUCCESS', ...base };
  } catch (error) {
    logger.error('signing-key lifecycle step failed', { requestType: event.RequestType, error: error as Error });
    // CloudFormation shows the reason with the failed resource; 4 KB at most in the response.
    response = { Status: 'FAILED', Reason: `${(error as Error).name}: ${(error as Error).message}`.slice(0, 1000), ...base };
  }
  await (deps.respond ?? putResponse)(event.ResponseURL, response);
  return response;
}

/** The deployed function, over the schedule and key store shared/runtime.ts makes on its first run. */
export const handler = createRotationHandler(rotationDeps);

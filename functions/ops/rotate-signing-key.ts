import { logger } from '#shared/log';
import { rotationDeps } from '#shared/runtime';
import { initSigningKeys, rotateSigningKeys, tearDownSigningKeys, type RotationDeps, type RotationOptions, type RotationOutcome } from '#shared/keys/rotation';

/** What the invoker sends: the EventBridge schedule `{"mode":"when-due"}`, the operator `{"mode":"now"}` or `{"mode":"report"}`. */
export interface RotationEvent {
  mode?: 'now' | 'when-due' | 'report';
}

/**
 * What CloudFormation sends for the stack's signing-key lifecycle resource
 * (infra/constructs/signing-key-lifecycle.ts), a custom resource whose service token is this function.
 */
export interface LifecycleEvent {
  RequestType: 'Create' | 'Update' | 'Delete';
  /** A pre-signed S3 URL that takes the answer (a PUT of the JSON below). */
  ResponseURL: string;
  StackId: string;
  RequestId: string;
  LogicalResourceId: string;
  PhysicalResourceId?: string;
  ResourceProperties: { TeardownOnDelete?: string };
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
 * the aliases `…-current` and `…-next`. No HTTP route. CloudFormation invokes it too, for the stack's
 * lifecycle resource: on Create and Update the deployment's step (initSigningKeys), on Delete, for a
 * stage that keeps no data, the teardown (tearDownSigningKeys); it always answers CloudFormation,
 * with FAILED and the error when the work failed, and keeps the resource's physical id, so that an
 * update never looks like a replacement (whose clean-up would be a Delete).
 */
export function createRotationHandler(deps: () => RotationHandlerDeps) {
  async function handler(event?: RotationEvent): Promise<RotationSummary>;
  async function handler(event: LifecycleEvent): Promise<LifecycleResponse>;
  async function handler(event: RotationEvent | LifecycleEvent = {}): Promise<RotationSummary | LifecycleResponse> {
    if (isLifecycleEvent(event)) return lifecycle(event, deps());
    const mode: RotationOptions['mode'] = event.mode === 'now' || event.mode === 'report' ? event.mode : 'when-due';
    const summary = summarize(mode, await rotateSigningKeys(deps(), { mode }));
    logger.info('signing-key rotation step', summary);
    return summary;
  }
  return handler;
}

async function lifecycle(event: LifecycleEvent, deps: RotationHandlerDeps) {
  const physicalId = event.PhysicalResourceId ?? `signing-keys-${event.StackId.split('/').pop() ?? event.RequestId}`;
  const base = { PhysicalResourceId: physicalId, StackId: event.StackId, RequestId: event.RequestId, LogicalResourceId: event.LogicalResourceId };
  let response: LifecycleResponse;
  try {
    if (event.RequestType === 'Delete') {
      if (event.ResourceProperties.TeardownOnDelete === 'true') {
        const { deleted } = await tearDownSigningKeys(deps);
        logger.info('signing keys torn down', { deleted });
      }
    } else {
      logger.info('signing-key deployment step', summarize('init', await initSigningKeys(deps)));
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

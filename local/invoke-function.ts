import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { endpointOf, isFunctionName, ROUTES, type FunctionName } from '#functions/registry';
import { runAsFunction } from '#local/invocation-context';
import { lambdaContext } from '#local/lambda-context';
import { sampleEvent, type ScheduledInput } from '#local/sample-events';
import { useServiceEnvironment, type ServiceFacts } from '#local/service';
import { QUEUE_SOURCE, STREAM_SOURCE } from '#local/webhooks';
import { PRESENCE_SOURCE, PROVISIONING_HOOK_SOURCE, REPORTS_SOURCE } from '#local/iot-rules';
import { DESIRED_STATE_SOURCE } from '#local/device-shadow';
import type { EventSourceKind } from '#shared/declaration';

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
type ScheduledHandler = (event: ScheduledInput, context: Context) => Promise<unknown>;

export interface Invocation {
  /** The handler's answer; a scheduled or event-source function's return value is the JSON body of a 200. */
  result: APIGatewayProxyStructuredResultV2;
  /** What the sample event asked, when no event was given. */
  sample?: string;
}

export { isFunctionName };

/** How each kind of event source is named when it invokes a function (the names test/support/deployed-form.ts gives the deployed ones). */
const EVENT_SOURCE_NAMES: Record<EventSourceKind, { api: 'stream' | 'queue' | 'iot'; routeKey: string }> = {
  'table-stream': STREAM_SOURCE, 'webhook-queue': QUEUE_SOURCE, 'iot-presence': PRESENCE_SOURCE, 'iot-provisioning-hook': PROVISIONING_HOOK_SOURCE,
  'iot-shadow': REPORTS_SOURCE,
};
/** The table's stream has two mappings: the webhook fan-out's, and the devices' desired state's. */
const sourceOf = (fn: FunctionName, kind: EventSourceKind) => (fn === 'sync-desired-state' ? DESIRED_STATE_SOURCE : EVENT_SOURCE_NAMES[kind]);

/**
 * Runs one function's handler in this process against a running local service, with the service's
 * environment (table, hosts, local signing key, outbox): `npm run invoke`. Without `event`, it sends
 * the function's sample event and then removes what the sample stored. What the handlers use
 * (shared/runtime.ts) is built from the environment once, at their first load or use, so one process
 * invokes against one service.
 */
export async function invokeFunction(facts: ServiceFacts, fn: FunctionName, event?: APIGatewayProxyEventV2 | ScheduledInput): Promise<Invocation> {
  useServiceEnvironment(facts);
  const sample = event ? undefined : await sampleEvent(fn, facts);
  try {
    const { entry: file, schedule, eventSource } = endpointOf(fn);
    const entry = fileURLToPath(new URL(`../${file}`, import.meta.url));
    const sent = event ?? sample!.event;
    const context = lambdaContext(fn, randomUUID());
    if (schedule || eventSource) {
      // Attributed as its EventBridge rule or event source mapping invokes it, so its AWS calls are checked against its role too.
      const { handler } = (await import(entry)) as { handler: ScheduledHandler };
      const source = schedule ? { api: 'schedule' as const, routeKey: schedule } : sourceOf(fn, eventSource!);
      const output = await runAsFunction({ fn, ...source }, () => handler(sent as ScheduledInput, context));
      return { result: { statusCode: 200, body: JSON.stringify(output) }, ...(sample ? { sample: sample.description } : {}) };
    }
    const { handler } = (await import(entry)) as { handler: LambdaHandler };
    const httpEvent = sent as APIGatewayProxyEventV2;
    // Attributed to the function as the gateway does, so its AWS calls are checked against its role too.
    const api = ROUTES.find((route) => route.fn === fn)?.api ?? 'auth';
    const result = await runAsFunction({ fn, api, routeKey: httpEvent.routeKey }, () => handler(httpEvent, context));
    return { result, ...(sample ? { sample: sample.description } : {}) };
  } finally {
    await sample?.cleanup();
  }
}

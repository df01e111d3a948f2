import { NestedStack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { endpointOf, type FunctionName } from '#functions/registry';
import type { ApiName } from '#shared/routes';

/**
 * The areas the functions are deployed in, one nested stack each, so that no stack comes near
 * CloudFormation's 500 resources as endpoints are added (test/infra/stack-size.test.ts counts them).
 */
export type FunctionArea = 'ResourceApi' | 'AuthServer' | 'Console' | 'Webhooks' | 'Devices' | 'Operations';

/**
 * The area of function `fn` as `api` serves it: the resource API's functions (its fallback
 * included), the developer console's pages, the webhook pipeline, the operators' functions without
 * a route, the devices' presence, shadow and fleet provisioning on AWS IoT Core, and the authorization server with its sign-in and
 * account pages (its fallback included).
 */
export function areaOf(fn: FunctionName, api?: ApiName): FunctionArea {
  const def = endpointOf(fn);
  if (def.schedule) return 'Operations';
  // The devices' own functions (presence, the shadow's desired state and reports), whatever invokes them.
  if (def.eventSource && def.entry.startsWith('functions/devices/')) return 'Devices';
  if (def.eventSource) return 'Webhooks';
  if (api === 'resource') return 'ResourceApi';
  if (def.entry.startsWith('functions/developer/')) return 'Console';
  return 'AuthServer';
}

/**
 * The nested stacks of the function areas, each made on first use. What stays in the parent stack
 * is what must never be replaced by a later layout: the table, the signing key, the queues, the
 * two APIs with their routes, integrations and stages (a route moved to another stack would be
 * created there before CloudFormation deletes the old one, and API Gateway refuses a second route
 * with the same key), the custom domains and the alarms. A function, its role, log group and
 * invoke permissions can move freely: their names are generated, so old and new coexist during
 * the update.
 */
export class FunctionAreas extends Construct {
  private readonly stacks = new Map<FunctionArea, NestedStack>();

  /** The nested stack of `area`. */
  of(area: FunctionArea): NestedStack {
    let stack = this.stacks.get(area);
    if (!stack) {
      stack = new NestedStack(this, `${area}Functions`, { description: `Device and User Service: the ${area} functions` });
      this.stacks.set(area, stack);
    }
    return stack;
  }
}

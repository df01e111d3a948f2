import { runSimulation } from '@cloud-copilot/iam-simulate';
import { ACCOUNT, type PolicyDocument } from './deployed-form';

/** One request to judge: who does what on which resource, with its condition keys and the policies in play. */
export interface IamRequest {
  /** A role ARN, or a service principal such as `cloudwatch.amazonaws.com`. */
  principal: string;
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
  /** The principal's identity policies (none for a service principal). */
  identityPolicies?: readonly { name: string; document: PolicyDocument }[];
  /** The resource's own policy: a KMS key policy, a topic or queue policy. */
  resourcePolicy?: PolicyDocument;
}

/**
 * AWS's verdict on `request` (`Allowed`, `ExplicitlyDenied`, `ImplicitlyDenied`), by
 * @cloud-copilot/iam-simulate, which implements IAM's evaluation logic (identity and resource
 * policies, explicit and implicit denies, condition operators, each service's actions and ARNs),
 * in the account of the deployed form.
 */
export async function iamVerdict(request: IamRequest): Promise<string> {
  const result = await runSimulation({
    request: {
      principal: request.principal,
      action: request.action,
      resource: { resource: request.resource, accountId: ACCOUNT },
      contextVariables: request.context ?? {},
    },
    identityPolicies: (request.identityPolicies ?? []).map(({ name, document }) => ({ name, policy: document })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    ...(request.resourcePolicy ? { resourcePolicy: request.resourcePolicy } : {}),
  }, {});
  if (result.resultType === 'error') throw new Error(`simulation of ${request.action} failed: ${JSON.stringify(result.errors)}`);
  return result.overallResult;
}

/** Whether AWS allows `request` (iamVerdict). */
export async function iamAllows(request: IamRequest): Promise<boolean> {
  return (await iamVerdict(request)) === 'Allowed';
}

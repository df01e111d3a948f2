import { CfnResource, NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { DeviceUserServiceStack } from '#infra/stack';
import { removeTestApps, testApp } from './cdk-app';

// The deployed form of the service, read from the synthesized CloudFormation template alone: which
// function each API route (or EventBridge schedule) reaches, the role of each function and that role's policies, with the
// intrinsic functions resolved to the values CloudFormation would give them in one account and region.

export const ACCOUNT = '123456789012';
export const REGION = 'eu-west-1';
export const MAIL_FROM = 'no-reply@mail.example.org';
/**
 * The SES identities an operator may have verified for MAIL_FROM, each of which SES then authorizes
 * a send against: the address, its domain, or a parent domain ("Creating and verifying identities",
 * SES Developer Guide: a verified domain covers its subdomains).
 */
export const MAIL_FROM_IDENTITIES = [MAIL_FROM, 'mail.example.org', 'example.org'] as const;
/** The stack's name here, and the id CloudFormation gives it (`AWS::StackId`): a stack of this name deployed again gets another. */
export const STACK_NAME = 'Deployed';
export const STACK_ID = `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${STACK_NAME}/5f0e2a4c-9b1d-4e3f-8a7c-6d5b4a3c2e1f`;

type Resource = { Type: string; Properties: Record<string, any> };
export type PolicyDocument = { Version: string; Statement: Statement[] };
export type Statement = { Effect: string; Action: string | string[]; Resource: string | string[]; Principal?: unknown; Condition?: unknown };

/** Synthesizes the service's stack (without bundling) and returns its template. */
export function synthesizeTemplate(): Record<string, any> {
  try {
    const stack = new DeviceUserServiceStack(testApp({ mailFrom: MAIL_FROM }), STACK_NAME, { env: { account: ACCOUNT, region: REGION } });
    return deployedTemplate(stack);
  } finally {
    removeTestApps();
  }
}

/**
 * The stack's template with its nested stacks inlined, as one template of everything deployed: each
 * nested stack's resources replace its AWS::CloudFormation::Stack resource, a Ref to one of its
 * parameters becomes the value the parent passes, and the parent's `Fn::GetAtt [<nested>,
 * Outputs.<name>]` becomes that output's value. Logical ids are kept (a clash fails), so template
 * tests read the deployed resources wherever the layout puts them.
 */
export function deployedTemplate(stack: Stack): Record<string, any> {
  const template = Template.fromStack(stack).toJSON();
  const resources: Record<string, any> = { ...template.Resources };
  const outputs = new Map<string, Record<string, { Value: unknown }>>();
  for (const nested of stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c) && c.nestedStackParent === stack)) {
    const id = stack.getLogicalId(nested.nestedStackResource as CfnResource);
    const parameters = (resources[id]?.Properties?.Parameters ?? {}) as Record<string, unknown>;
    delete resources[id];
    const inner = deployedTemplate(nested);
    const withParameters = substitute(inner, (node) => (typeof node.Ref === 'string' && node.Ref in parameters ? parameters[node.Ref] : undefined));
    for (const [innerId, resource] of Object.entries(withParameters.Resources as Record<string, unknown>)) {
      if (innerId in resources) throw new Error(`logical id ${innerId} is in two stacks`);
      resources[innerId] = resource;
    }
    outputs.set(id, withParameters.Outputs ?? {});
  }
  const outputOf = (node: Record<string, unknown>): unknown => {
    const getAtt = node['Fn::GetAtt'];
    if (!Array.isArray(getAtt) || !outputs.has(getAtt[0]) || !String(getAtt[1]).startsWith('Outputs.')) return undefined;
    const output = outputs.get(getAtt[0])![String(getAtt[1]).slice('Outputs.'.length)];
    if (!output) throw new Error(`no output ${getAtt[1]} in ${getAtt[0]}`);
    // An output may itself pass on a sibling's output.
    return substitute(output.Value, outputOf);
  };
  const dropNestedDependencies = (value: any) => {
    for (const resource of Object.values(value as Record<string, any>)) {
      if (!resource.DependsOn) continue;
      resource.DependsOn = [resource.DependsOn].flat().filter((d: string) => !outputs.has(d));
      if (resource.DependsOn.length === 0) delete resource.DependsOn;
    }
    return value;
  };
  return substitute({ ...template, Resources: dropNestedDependencies(resources) }, outputOf);
}

/** `value` with every object node that `replace` answers for replaced by its answer. */
function substitute(value: any, replace: (node: Record<string, any>) => unknown): any {
  if (Array.isArray(value)) return value.map((v) => substitute(v, replace));
  if (typeof value !== 'object' || value === null) return value;
  const replaced = replace(value);
  if (replaced !== undefined) return replaced;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, replace)]));
}

export interface DeployedFunction {
  /** Logical id of the Lambda function. */
  id: string;
  roleArn: string;
  /** Every identity policy of the role (inline and attached AWS::IAM::Policy), resolved. */
  policies: { name: string; document: PolicyDocument }[];
  /** `<api> <route key>` of every route integrated with this function; `schedule <expression>` of every rule invoking it. */
  routes: string[];
  /** Its environment variables, resolved as CloudFormation would (those this file cannot resolve left out). */
  environment: Record<string, string>;
  /** The tags of its role, resolved: a principal's tags are condition keys (`aws:PrincipalTag/<key>`). */
  principalTags: Record<string, string>;
}

export interface DeployedForm {
  functions: DeployedFunction[];
  /** The function a route reaches: key `resource GET /user`, `auth $default`, …, and `schedule rate(1 hour)` for a rule's target. */
  functionOfRoute: Map<string, DeployedFunction>;
  tableArn: string;
  indexNames: string[];
  signingKeyArn: string;
  /** The tags of the stack's signing key. */
  signingKeyTags: Record<string, string>;
  keyPolicy: PolicyDocument;
  mailFrom: string;
  /** The SES configuration set the mail functions send with. */
  configurationSetArn: string;
  /** The webhook delivery queue (the source of the delivery function's event source mapping). */
  webhookQueueArn: string;
  /** Each event source mapping's on-failure destination (the fan-out's stream-failures queue): Lambda sends to it with the function's role. */
  mappingFailureDestinations: string[];
  /** The SNS topic every alarm notifies, with its topic policy. */
  alarmTopic: { arn: string; policy: PolicyDocument };
  /** The signing-key lifecycle resource's `RotatedKeyPolicy` property, resolved (the policy it makes the function apply). */
  lifecycleKeyPolicy: string;
  /** Every on-failure destination (a queue) of a function's asynchronous runs: Lambda's own use of the function's role. */
  asyncFailureQueues: string[];
  /** Per scheduled function: its rule, and the queue that takes the runs that failed every try, with that queue's policy. */
  scheduledFailures: { fn: DeployedFunction; ruleArn: string; queueArn: string; queuePolicy: PolicyDocument; invokeConfig: Record<string, any> }[];
}

export function readDeployedForm(template: Record<string, any>): DeployedForm {
  const resources = template.Resources as Record<string, Resource>;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const only = (type: string) => {
    const found = ofType(type);
    if (found.length !== 1) throw new Error(`expected one ${type}, found ${found.length}`);
    return found[0]!;
  };
  const resolve = (value: unknown): any => resolveIntrinsics(value, resources);

  // The API with the JWT authorizer is the resource API; the other one is the authorization server.
  const [, authorizer] = only('AWS::ApiGatewayV2::Authorizer');
  const resourceApiId = (authorizer.Properties.ApiId as { Ref: string }).Ref;
  const apiName = (apiRef: { Ref: string }) => (apiRef.Ref === resourceApiId ? 'resource' : 'auth');

  const functions = new Map<string, DeployedFunction>();
  for (const [id, fn] of ofType('AWS::Lambda::Function')) {
    const roleId = (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const role = resources[roleId]!;
    if (role.Properties.ManagedPolicyArns?.length) throw new Error(`${roleId} has managed policies, which this check cannot read`);
    const inline = (role.Properties.Policies ?? []).map((p: any) => ({ name: p.PolicyName, document: resolve(p.PolicyDocument) }));
    const attached = ofType('AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .map(([policyId, p]) => ({ name: policyId, document: resolve(p.Properties.PolicyDocument) }));
    // A variable naming a resource this file cannot resolve (an API's endpoint) is left out.
    const variables = Object.entries((fn.Properties.Environment?.Variables ?? {}) as Record<string, unknown>)
      .flatMap(([name, value]) => {
        try {
          const resolved: unknown = resolve(value);
          return typeof resolved === 'string' ? [[name, resolved] as const] : [];
        } catch {
          return [];
        }
      });
    functions.set(id, {
      id, roleArn: resolve({ 'Fn::GetAtt': [roleId, 'Arn'] }), policies: [...inline, ...attached], routes: [], environment: Object.fromEntries(variables),
      principalTags: tagsOf(role, resolve),
    });
  }

  const functionOfRoute = new Map<string, DeployedFunction>();
  for (const [, route] of ofType('AWS::ApiGatewayV2::Route')) {
    const target = route.Properties.Target as { 'Fn::Join': [string, [string, { Ref: string }]] };
    const integration = resources[target['Fn::Join'][1][1].Ref]!;
    const fnId = (integration.Properties.IntegrationUri as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const fn = functions.get(fnId)!;
    const key = `${apiName(route.Properties.ApiId)} ${route.Properties.RouteKey}`;
    fn.routes.push(key);
    functionOfRoute.set(key, fn);
  }

  // A function without a route is reached by the EventBridge rules that target it.
  for (const [, rule] of ofType('AWS::Events::Rule')) {
    for (const target of rule.Properties.Targets as { Arn: { 'Fn::GetAtt'?: [string, string] } }[]) {
      const fn = functions.get(target.Arn['Fn::GetAtt']?.[0] ?? '');
      if (!fn) continue;
      const key = `schedule ${rule.Properties.ScheduleExpression as string}`;
      fn.routes.push(key);
      functionOfRoute.set(key, fn);
    }
  }

  // A function an event source mapping invokes is reached through it: `stream table` for the
  // table's stream, `queue webhook-deliveries` for the delivery queue (as local/webhooks.ts names them).
  let webhookQueueArn = '';
  const mappingFailureDestinations: string[] = [];
  for (const [, mapping] of ofType('AWS::Lambda::EventSourceMapping')) {
    const fn = functions.get((mapping.Properties.FunctionName as { Ref: string }).Ref);
    if (!fn) continue;
    const destination = mapping.Properties.DestinationConfig?.OnFailure?.Destination;
    if (destination) mappingFailureDestinations.push(resolve(destination) as string);
    const [sourceId, attribute] = (mapping.Properties.EventSourceArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
    const isStream = attribute === 'StreamArn';
    if (!isStream) webhookQueueArn = arnOf(sourceId, resources);
    // The stream's second mapping is the desired state's (`stream desired-state`, as local/device-shadow.ts names it).
    const key = !isStream ? 'queue webhook-deliveries' : fn.id.startsWith('SyncDesiredStateFunction') ? 'stream desired-state' : 'stream table';
    fn.routes.push(key);
    functionOfRoute.set(key, fn);
  }

  // The alarm topic's policy is the one that lets CloudWatch publish (the lifecycle topic's only denies plain HTTP).
  const topicPolicies = ofType('AWS::SNS::TopicPolicy').filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes('cloudwatch.amazonaws.com'));
  if (topicPolicies.length !== 1) throw new Error(`expected one alarm topic policy, found ${topicPolicies.length}`);
  const topicPolicy = topicPolicies[0]![1];
  const [, lifecycle] = only('Custom::SigningKeyLifecycle');
  // A function an IoT Core topic rule invokes: `iot presence` for the device presence rule (as local/iot-rules.ts names it).
  for (const [, rule] of ofType('AWS::IoT::TopicRule')) {
    const payload = rule.Properties.TopicRulePayload as { Sql: string; Actions: { Lambda?: { FunctionArn: { 'Fn::GetAtt': [string, string] } } }[] };
    // …and `iot shadow-reports` for the device reports rule.
    const key = payload.Sql.includes('$aws/events/presence/') ? 'iot presence' : payload.Sql.includes('/shadow/update/documents') ? 'iot shadow-reports' : undefined;
    if (!key) throw new Error(`a topic rule this form does not know: ${payload.Sql}`);
    for (const action of payload.Actions) {
      const fn = functions.get(action.Lambda?.FunctionArn['Fn::GetAtt'][0] ?? '');
      if (!fn) continue;
      fn.routes.push(key);
      functionOfRoute.set(key, fn);
    }
  }
  // The function fleet provisioning's template asks first: `iot provisioning-hook` (as local/iot-rules.ts names it).
  for (const [, template] of ofType('AWS::IoT::ProvisioningTemplate')) {
    const hook = template.Properties.PreProvisioningHook as { TargetArn: { 'Fn::GetAtt': [string, string] } } | undefined;
    const fn = functions.get(hook?.TargetArn['Fn::GetAtt'][0] ?? '');
    if (!fn) continue;
    fn.routes.push('iot provisioning-hook');
    functionOfRoute.set('iot provisioning-hook', fn);
  }
  // The queues Lambda sends a function's failed asynchronous runs to (on-failure destinations), with the function's role.
  const asyncFailureQueues = ofType('AWS::Lambda::EventInvokeConfig')
    .map(([, config]) => config.Properties.DestinationConfig?.OnFailure?.Destination).filter((arn) => arn !== undefined).map((arn) => resolve(arn) as string);

  const queuePolicyOf = (queueArn: string) => {
    const found = ofType('AWS::SQS::QueuePolicy').find(([, p]) => (p.Properties.Queues as unknown[]).some((q) => resolve(q) === queueArn.replace(/^.*:/, '')));
    if (!found) throw new Error(`no queue policy for ${queueArn}`);
    return resolve(found[1].Properties.PolicyDocument) as PolicyDocument;
  };
  const scheduledFailures = ofType('AWS::Events::Rule').flatMap(([ruleId, rule]) => (rule.Properties.Targets as any[]).map((target) => {
    const fn = functions.get(target.Arn['Fn::GetAtt'][0])!;
    const queueArn = resolve(target.DeadLetterConfig?.Arn) as string;
    const invokeConfig = ofType('AWS::Lambda::EventInvokeConfig').find(([, c]) => c.Properties.FunctionName.Ref === fn.id)?.[1].Properties ?? {};
    return { fn, ruleArn: resolve({ 'Fn::GetAtt': [ruleId, 'Arn'] }) as string, queueArn, queuePolicy: queuePolicyOf(queueArn), invokeConfig: resolve(invokeConfig) };
  }));

  const [tableId, table] = only('AWS::DynamoDB::GlobalTable');
  const [keyId, key] = only('AWS::KMS::Key');
  const [configurationSetId] = only('AWS::SES::ConfigurationSet');
  return {
    functions: [...functions.values()],
    functionOfRoute,
    tableArn: resolve({ 'Fn::GetAtt': [tableId, 'Arn'] }),
    indexNames: (table.Properties.GlobalSecondaryIndexes ?? []).map((i: { IndexName: string }) => i.IndexName),
    signingKeyArn: resolve({ 'Fn::GetAtt': [keyId, 'Arn'] }),
    signingKeyTags: tagsOf(key, resolve),
    keyPolicy: resolve(key.Properties.KeyPolicy),
    mailFrom: MAIL_FROM,
    // Unnamed in the template, its name is CloudFormation's; a Ref to it resolves to the logical id here.
    configurationSetArn: `arn:aws:ses:${REGION}:${ACCOUNT}:configuration-set/${ref(configurationSetId, resources)}`,
    webhookQueueArn,
    mappingFailureDestinations,
    alarmTopic: { arn: resolve(topicPolicy.Properties.Topics[0]), policy: resolve(topicPolicy.Properties.PolicyDocument) },
    lifecycleKeyPolicy: resolve(lifecycle.Properties.RotatedKeyPolicy),
    scheduledFailures,
    asyncFailureQueues,
  };
}

/** A resource's `Tags` property, resolved, as a map. */
function tagsOf(resource: Resource, resolve: (value: unknown) => any): Record<string, string> {
  return Object.fromEntries(((resource.Properties.Tags ?? []) as { Key: string; Value: unknown }[]).map((t) => [t.Key, String(resolve(t.Value))]));
}

/** Resolves Ref, Fn::GetAtt (Arn), Fn::Join, Fn::Split and Fn::Select as CloudFormation would, for the resource types the stack uses. */
function resolveIntrinsics(value: unknown, resources: Record<string, Resource>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => resolveIntrinsics(v, resources));
  const entries = Object.entries(value);
  const [name, argument] = entries[0] ?? [];
  if (entries.length === 1 && name === 'Ref') return ref(argument as string, resources);
  if (entries.length === 1 && name === 'Fn::GetAtt') {
    const [id, attribute] = argument as [string, string];
    if (attribute === 'StreamArn' && resources[id]?.Type === 'AWS::DynamoDB::GlobalTable') return `${arnOf(id, resources)}/stream/2026-01-01T00:00:00.000`;
    if (attribute !== 'Arn') throw new Error(`cannot resolve Fn::GetAtt ${id}.${attribute}`);
    return arnOf(id, resources);
  }
  if (entries.length === 1 && name === 'Fn::Join') {
    const [separator, parts] = argument as [string, unknown[]];
    return parts.map((part) => resolveIntrinsics(part, resources)).join(separator);
  }
  if (entries.length === 1 && name === 'Fn::Split') {
    const [separator, source] = argument as [string, unknown];
    return String(resolveIntrinsics(source, resources)).split(separator);
  }
  if (entries.length === 1 && name === 'Fn::Select') {
    const [index, list] = argument as [number | string, unknown];
    const items = resolveIntrinsics(list, resources) as unknown[];
    if (!Array.isArray(items) || items[Number(index)] === undefined) throw new Error(`Fn::Select ${index} is out of range`);
    return items[Number(index)];
  }
  if (entries.length === 1 && name?.startsWith('Fn::')) throw new Error(`cannot resolve ${name}`);
  return Object.fromEntries(entries.map(([k, v]) => [k, resolveIntrinsics(v, resources)]));
}

function ref(id: string, resources: Record<string, Resource>): string {
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws', 'AWS::Region': REGION, 'AWS::AccountId': ACCOUNT, 'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackId': STACK_ID, 'AWS::StackName': STACK_NAME,
  };
  if (id in pseudo) return pseudo[id]!;
  if (!resources[id]) throw new Error(`Ref to unknown ${id}`);
  // A topic's Ref is its ARN; the other resources read here give their name.
  if (resources[id]!.Type === 'AWS::SNS::Topic') return arnOf(id, resources);
  return id;
}

function arnOf(id: string, resources: Record<string, Resource>): string {
  const type = resources[id]?.Type;
  switch (type) {
    case 'AWS::DynamoDB::GlobalTable': return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${id}`;
    case 'AWS::KMS::Key': return `arn:aws:kms:${REGION}:${ACCOUNT}:key/${id}`;
    case 'AWS::Logs::LogGroup': return `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${id}:*`;
    case 'AWS::IAM::Role': return `arn:aws:iam::${ACCOUNT}:role/${id}`;
    case 'AWS::Lambda::Function': return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${id}`;
    case 'AWS::SQS::Queue': return `arn:aws:sqs:${REGION}:${ACCOUNT}:${id}`;
    case 'AWS::SNS::Topic': return `arn:aws:sns:${REGION}:${ACCOUNT}:${id}`;
    case 'AWS::Events::Rule': return `arn:aws:events:${REGION}:${ACCOUNT}:rule/${id}`;
    default: throw new Error(`cannot resolve the ARN of ${id} (${type})`);
  }
}

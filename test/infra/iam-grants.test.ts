import { beforeAll, describe, expect, inject, it } from 'vitest';
import { ENV } from '#shared/config';
import { endpointOf } from '#functions/registry';
import { iamAllows } from '../support/iam-evaluator';
import { loadRecordings, type AwsCall } from '../support/aws-calls';
import {
  ACCOUNT, MAIL_FROM_IDENTITIES, readDeployedForm, STACK_ID, synthesizeTemplate, type DeployedForm, type DeployedFunction, type PolicyDocument,
} from '../support/deployed-form';

// Are the deployed roles right? While the rest of `npm test` runs, every AWS call each function
// makes is recorded (test/support/record-aws-calls.ts: a middleware on the real SDK clients; the
// local gateway says which function and route the call belongs to). This file runs after the whole
// suite (vitest project `iam`, a later group order). It synthesizes the stack and evaluates every
// recorded call against the policies of the role that the TEMPLATE gives the function behind that
// route, with an IAM policy evaluator (@cloud-copilot/iam-simulate, which implements AWS's
// evaluation logic: identity policies, resource policies such as the KMS key policy, explicit and
// implicit denies, wildcards, and the action and ARN catalogue of every service). The route table
// plays no part in the verdict: a function that calls what its deployed role does not allow fails.

/** One authorization a function needs: its action on one resource, with a scenario that needed it. */
interface Need {
  fn: DeployedFunction;
  action: string;
  resourceArn: string;
  /** The request's condition keys (the principal's tags and account; KMS: the key's tags, CreateKey's request tags). */
  context: Record<string, string | string[]>;
  /** The resource's own policy (a KMS key's key policy), if it has one. */
  resourcePolicy?: PolicyDocument;
  scenario: string;
}

describe('IAM: the deployed roles allow exactly the AWS calls the functions make', () => {
  let form: DeployedForm;
  let needs: Need[];
  let notDeployed: AwsCall[];
  let createdKeys: Set<string>;

  beforeAll(() => {
    form = readDeployedForm(synthesizeTemplate());
    const recording = loadRecordings(inject('awsCallsDir'));
    if (recording.invocations.length === 0) {
      throw new Error('No function was invoked: this test checks what the rest of `npm test` recorded, run it with the whole suite.');
    }
    createdKeys = new Set(recording.createdKeys.map((arn) => arn.split('/').pop()!));
    const distinct = new Map<string, Need>();
    notDeployed = [];
    for (const call of recording.calls) {
      const fn = form.functionOfRoute.get(`${call.by.api} ${call.by.routeKey}`);
      if (!fn) {
        notDeployed.push(call);
        continue;
      }
      for (const target of targetsOf(call, fn)) {
        distinct.set(`${fn.id} ${call.action} ${target.resourceArn} ${JSON.stringify(target.context)}`, { fn, action: call.action, ...target, scenario: call.test });
      }
    }
    needs = [...distinct.values()];
    invoked = new Set(recording.invocations.map((i) => `${i.api} ${i.routeKey}`));
  });
  let invoked: Set<string>;
  const lambdaDestinations = () => new Set([...form.scheduledFailures.map(({ queueArn }) => queueArn), ...form.mappingFailureDestinations, ...form.asyncFailureQueues]);

  /**
   * The deployed resource a recorded call names, with its condition keys: locally every test file has
   * a table of its own, the stand-ins their own keys, aliases, sender and configuration set. A KMS key a function created
   * (CreateKey) is a key of the deployed rotation, with the key policy the deployed rotation function
   * gives it (its SIGNING_KEY_POLICY); any other key is the stack's own, with the template's tags and
   * key policy. Every request carries its principal's tags (the role's, from the template) and account.
   */
  function targetsOf(call: AwsCall, fn: DeployedFunction): Pick<Need, 'resourceArn' | 'context' | 'resourcePolicy'>[] {
    // SES authorizes a send against the verified identity it sends as: the deployed sender's address,
    // or its domain, or a parent domain of it when that is what the operator verified.
    if (call.resource.type === 'identity') {
      const region = form.tableArn.split(':')[3];
      return MAIL_FROM_IDENTITIES.map((identity) => ({ resourceArn: `arn:aws:ses:${region}:${ACCOUNT}:identity/${identity}`, context: {} }));
    }
    return [targetOf(call, fn)];
  }

  function targetOf(call: AwsCall, fn: DeployedFunction): Pick<Need, 'resourceArn' | 'context' | 'resourcePolicy'> {
    const region = form.tableArn.split(':')[3];
    const principal = {
      'kms:CallerAccount': ACCOUNT,
      ...Object.fromEntries(Object.entries(fn.principalTags).map(([k, v]) => [`aws:PrincipalTag/${k}`, v])),
    };
    const target = ((): Pick<Need, 'resourceArn' | 'context' | 'resourcePolicy'> => {
      switch (call.resource.type) {
        case 'table': return { resourceArn: form.tableArn, context: {} };
        case 'index':
          if (!form.indexNames.includes(call.resource.index)) throw new Error(`${call.by.fn} queries index ${call.resource.index}, which the table does not have`);
          return { resourceArn: `${form.tableArn}/index/${call.resource.index}`, context: {} };
        case 'key': {
          const keyId = call.resource.keyId.split('/').pop()!;
          // What KMS puts in every request on a key: both kinds are RSA_2048 signing keys made by KMS.
          const key = { 'kms:KeySpec': 'RSA_2048', 'kms:KeyUsage': 'SIGN_VERIFY', 'kms:KeyOrigin': 'AWS_KMS' };
          if (createdKeys.has(keyId)) {
            return { resourceArn: `arn:aws:kms:${region}:${ACCOUNT}:key/${keyId}`, context: key, resourcePolicy: rotatedKeyPolicy() };
          }
          const tags = Object.fromEntries(Object.entries(form.signingKeyTags).map(([k, v]) => [`aws:ResourceTag/${k}`, v]));
          return { resourceArn: form.signingKeyArn, context: { ...key, ...tags }, resourcePolicy: form.keyPolicy };
        }
        case 'new-key': {
          const { tags } = call.resource;
          return {
            resourceArn: '*',
            context: { ...Object.fromEntries(Object.entries(tags).map(([k, v]) => [`aws:RequestTag/${k}`, v])), 'aws:TagKeys': Object.keys(tags) },
          };
        }
        case 'alias': {
          const prefix = fn.environment[ENV.signingKeyAliasPrefix];
          if (!prefix) throw new Error(`${call.by.fn} points alias ${call.resource.alias} but its deployed function has no ${ENV.signingKeyAliasPrefix}`);
          return { resourceArn: `arn:aws:kms:${region}:${ACCOUNT}:${prefix}-${call.resource.alias.split('-').pop()}`, context: {} };
        }
        case 'identity': throw new Error('an SES identity has several targets (targetsOf)');
        case 'configuration-set': return { resourceArn: form.configurationSetArn, context: {} };
        case 'queue': return { resourceArn: form.webhookQueueArn, context: {} };
        // Locally the stand-in's one stack; deployed, the stack that holds the lifecycle resource (SIGNING_KEY_STACK_ID).
        case 'stack': return { resourceArn: STACK_ID, context: {} };
        case 'certificate': return { resourceArn: `arn:aws:iot:${region}:${ACCOUNT}:cert/${call.resource.certificateId}`, context: {} };
        // Every device's thing is named after its id, in the stack's region and account.
        case 'thing': return { resourceArn: `arn:aws:iot:${region}:${ACCOUNT}:thing/${call.resource.thingName}`, context: {} };
      }
    })();
    return { ...target, context: { ...principal, ...target.context } };
  }

  /** The key policy the deployed rotation function gives each key it creates. */
  function rotatedKeyPolicy(): PolicyDocument {
    const policy = form.functions.map((f) => f.environment[ENV.signingKeyPolicy]).find((p) => p !== undefined);
    if (!policy) throw new Error(`A function created a KMS key, but no deployed function has ${ENV.signingKeyPolicy}`);
    return JSON.parse(policy) as PolicyDocument;
  }

  function allowed(need: Omit<Need, 'scenario'>, policies = need.fn.policies): Promise<boolean> {
    return iamAllows({
      principal: need.fn.roleArn, action: need.action, resource: need.resourceArn, context: need.context,
      identityPolicies: policies, ...(need.resourcePolicy ? { resourcePolicy: need.resourcePolicy } : {}),
    });
  }


  it('every deployed function, and every route to a function other than a fallback, was invoked by the suite', () => {
    // A fallback is a function behind a catch-all route (`$default`, `/{proxy+}`); its many 405/404
    // routes run the same code, so invoking it through one of them suffices.
    const fallbacks = new Set([...form.functionOfRoute.entries()].filter(([route]) => / (\$default|\S*\{proxy\+\})$/.test(route)).map(([, fn]) => fn));
    const missingRoutes = [...form.functionOfRoute.entries()]
      .filter(([route, fn]) => !fallbacks.has(fn) && !invoked.has(route)).map(([route]) => route);
    const missingFunctions = form.functions.filter((fn) => !fn.routes.some((route) => invoked.has(route))).map((fn) => fn.id);
    expect(missingRoutes).toEqual([]);
    expect(missingFunctions).toEqual([]);
  });

  it('only local-only functions made calls outside the deployed routes', () => {
    const strays = notDeployed.filter((call) => !endpointOf(call.by.fn).localOnly);
    expect(strays.map((c) => `${c.by.api} ${c.by.routeKey}: ${c.action}`)).toEqual([]);
  });

  it('every recorded call is allowed by the role of the function that made it', async () => {
    const denied: string[] = [];
    for (const need of needs) {
      if (!(await allowed(need))) denied.push(`${need.fn.routes.join(', ')}: ${need.action} on ${need.resourceArn} (in "${need.scenario}")`);
    }
    expect(denied).toEqual([]);
  });

  it('every action a role grants is used by a recorded call of its function (log writes aside)', () => {
    const unused: string[] = [];
    for (const fn of form.functions) {
      const used = new Set(needs.filter((n) => n.fn === fn).map((n) => n.action));
      for (const action of grantedActions(fn.policies, lambdaDestinations())) {
        // Lambda itself writes the function's logs, and its event source mappings read the stream or
        // the queue, with the role: no SDK call of ours is expected for those.
        if (action === 'logs:CreateLogStream' || action === 'logs:PutLogEvents' || EVENT_SOURCE_ACTIONS.has(action)) continue;
        if (!used.has(action)) unused.push(`${fn.routes.join(', ')}: ${action}`);
      }
    }
    expect(unused).toEqual([]);
  });

  it('removing any single granted action denies a recorded call (each grant is needed, and the check can fail)', async () => {
    const survivors: string[] = [];
    let mutants = 0;
    for (const fn of form.functions) {
      const own = needs.filter((n) => n.fn === fn);
      for (const action of grantedActions(fn.policies, lambdaDestinations())) {
        if (action.startsWith('logs:') || EVENT_SOURCE_ACTIONS.has(action)) continue;
        mutants += 1;
        const weakened = fn.policies.map(({ name, document }) => ({ name, document: withoutAction(document, action) }));
        const results = await Promise.all(own.filter((n) => n.action === action).map((n) => allowed(n, weakened)));
        if (!results.includes(false)) survivors.push(`${fn.routes.join(', ')}: ${action}`);
      }
    }
    expect(mutants).toBeGreaterThan(20);
    expect(survivors).toEqual([]);
  });
});

/**
 * What Lambda's event source mappings do with the function's role (poll the table's stream, receive
 * and delete the queue's messages: "Lambda execution role" permissions of the DynamoDB and SQS event
 * sources); sqs:ChangeMessageVisibility is not among them here, as the delivery code calls it itself.
 */
const EVENT_SOURCE_ACTIONS = new Set([
  'dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams',
  'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl',
]);

/**
 * Statements on these resources are Lambda's own use of the role: a scheduled function's (or the
 * presence function's) failed asynchronous run is sent to its failures queue by Lambda (an on-failure
 * destination), with the function's role; alarm-delivery.test.ts checks that grant for the schedules.
 * Likewise a stream batch the fan-out gave up on, to its event source mapping's on-failure
 * destination (webhooks.test.ts checks that grant).
 */
function grantedActions(policies: { document: PolicyDocument }[], lambdaResources: ReadonlySet<string>): Set<string> {
  const actions = new Set<string>();
  for (const { document } of policies) {
    for (const statement of document.Statement) {
      if (statement.Effect !== 'Allow') continue;
      if ([statement.Resource].flat().every((resource) => lambdaResources.has(resource))) continue;
      for (const action of [statement.Action].flat()) actions.add(action);
    }
  }
  return actions;
}

function withoutAction(document: PolicyDocument, action: string): PolicyDocument {
  return {
    ...document,
    Statement: document.Statement
      .map((s) => ({ ...s, Action: [s.Action].flat().filter((a) => a !== action) }))
      .filter((s) => s.Action.length > 0),
  };
}

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { currentInvocation, invocationCounts, type Invocation } from '#local/invocation-context';
import { setClientHook } from '#shared/aws/client-config';

/**
 * One IAM authorization an AWS call needs, as AWS documents it per operation: DynamoDB checks the
 * action named after the operation on the table (or index) it names, and a transaction checks each
 * of its parts as the underlying PutItem, UpdateItem, DeleteItem, ConditionCheckItem or GetItem
 * ("Using IAM with DynamoDB transactions", DynamoDB Developer Guide); KMS checks the key, CreateKey
 * checks no resource (`*`) but its request tags, and needs kms:TagResource too when it tags the key;
 * CreateAlias and UpdateAlias check the alias and the key it points to ("Controlling access to
 * aliases", KMS Developer Guide; UpdateAlias also checks the key the alias pointed to before, and
 * DeleteAlias the key the alias points to, which the request does not name); SES's SendEmail checks the sending identity (the `Source` address)
 * and, when the request names one, the configuration set too (Service Authorization Reference,
 * "Actions, resources, and condition keys for Amazon SES": SendEmail's resource types are
 * `identity`, required, and `configuration-set`); SQS checks the queue, SendMessageBatch as
 * sqs:SendMessage; CloudFormation's DescribeStacks checks the stack it names; IoT's
 * GetThingShadow and UpdateThingShadow check the thing they name.
 */
export interface AwsCall {
  /** The function and the route through which it was invoked. */
  by: Invocation;
  /** IAM action, e.g. `dynamodb:BatchGetItem`. */
  action: string;
  /** What the request names: a table, an index of a table, a KMS key, an SES identity or configuration set. */
  resource:
    | { type: 'table'; table: string }
    | { type: 'index'; table: string; index: string }
    | { type: 'key'; keyId: string }
    | { type: 'new-key'; tags: Record<string, string> }
    | { type: 'alias'; alias: string }
    | { type: 'identity'; identity: string }
    | { type: 'configuration-set'; name: string }
    | { type: 'queue'; queueUrl: string }
    | { type: 'stack'; stackId: string }
    | { type: 'certificate'; certificateId: string }
    | { type: 'thing'; thingName: string };
  /** The SDK command that needed it, and the test that sent it (the scenario). */
  command: string;
  test: string;
}

export interface Recording {
  calls: AwsCall[];
  /** The KMS keys the functions created (CreateKey's answer), so the IAM test can tell them from the stack's key. */
  createdKeys: string[];
  /** Every route invoked, so that a function that calls nothing still counts as exercised. */
  invocations: (Invocation & { count: number })[];
}

type Input = Record<string, unknown>;

/** The authorizations an SDK command needs, from its client, command name and input. */
export function authorizationsOf(clientName: string, commandName: string, input: Input): Omit<AwsCall, 'by' | 'test'>[] {
  const operation = commandName.replace(/Command$/, '');
  if (clientName === 'DynamoDBClient') {
    const table = (name: unknown) => ({ type: 'table' as const, table: String(name) });
    switch (operation) {
      case 'BatchGetItem':
      case 'BatchWriteItem':
        return Object.keys(input.RequestItems as Input).map((name) => ({ action: `dynamodb:${operation}`, resource: table(name), command: operation }));
      case 'TransactWriteItems':
      case 'TransactGetItems':
        return (input.TransactItems as Input[]).map((item) => {
          const [part, body] = Object.entries(item)[0] as [string, Input];
          const action = part === 'ConditionCheck' ? 'ConditionCheckItem' : `${part}Item`;
          return { action: `dynamodb:${action}`, resource: table(body.TableName), command: operation };
        });
      default:
        return [{
          action: `dynamodb:${operation}`,
          resource: input.IndexName === undefined
            ? table(input.TableName)
            : { type: 'index', table: String(input.TableName), index: String(input.IndexName) },
          command: operation,
        }];
    }
  }
  if (clientName === 'KMSClient') {
    if (operation === 'CreateKey') {
      const tags = Object.fromEntries(((input.Tags ?? []) as { TagKey: string; TagValue: string }[]).map((t) => [t.TagKey, t.TagValue]));
      const resource = { type: 'new-key' as const, tags };
      return [
        { action: 'kms:CreateKey', resource, command: operation },
        ...(Object.keys(tags).length > 0 ? [{ action: 'kms:TagResource', resource, command: operation }] : []),
      ];
    }
    if (operation === 'DeleteAlias') {
      // KMS also checks kms:DeleteAlias on the key the alias points to, which the request does not name.
      return [{ action: 'kms:DeleteAlias', resource: { type: 'alias', alias: String(input.AliasName) }, command: operation }];
    }
    if (operation === 'CreateAlias' || operation === 'UpdateAlias') {
      return [
        { action: `kms:${operation}`, resource: { type: 'alias', alias: String(input.AliasName) }, command: operation },
        { action: `kms:${operation}`, resource: { type: 'key', keyId: String(input.TargetKeyId) }, command: operation },
      ];
    }
    return [{ action: `kms:${operation}`, resource: { type: 'key', keyId: String(input.KeyId) }, command: operation }];
  }
  if (clientName === 'SESClient') {
    return [
      { action: `ses:${operation}`, resource: { type: 'identity', identity: String(input.Source) }, command: operation },
      ...(input.ConfigurationSetName === undefined ? [] : [{
        action: `ses:${operation}`, resource: { type: 'configuration-set' as const, name: String(input.ConfigurationSetName) }, command: operation,
      }]),
    ];
  }
  if (clientName === 'SQSClient') {
    // A batch send is authorized as sqs:SendMessage (Service Authorization Reference, Amazon SQS).
    const action = operation === 'SendMessageBatch' ? 'SendMessage' : operation === 'ChangeMessageVisibilityBatch' ? 'ChangeMessageVisibility' : operation;
    return [{ action: `sqs:${action}`, resource: { type: 'queue', queueUrl: String(input.QueueUrl) }, command: operation }];
  }
  if (clientName === 'CloudFormationClient' && operation === 'DescribeStacks') {
    // Authorized against the stack it names (Service Authorization Reference, AWS CloudFormation).
    return [{ action: 'cloudformation:DescribeStacks', resource: { type: 'stack', stackId: String(input.StackName) }, command: operation }];
  }
  if (clientName === 'IoTClient' && operation === 'UpdateCertificate') {
    // Authorized against the certificate it names (Service Authorization Reference, AWS IoT: `cert`).
    return [{ action: 'iot:UpdateCertificate', resource: { type: 'certificate', certificateId: String(input.certificateId) }, command: operation }];
  }
  if (clientName === 'IoTDataPlaneClient' && /^(Get|Update|Delete)ThingShadow$/.test(operation)) {
    // Authorized against the thing it names (Service Authorization Reference, AWS IoT: resource type `thing`).
    return [{ action: `iot:${operation}`, resource: { type: 'thing', thingName: String(input.thingName) }, command: operation }];
  }
  throw new Error(`No IAM mapping for ${clientName} ${commandName}: add one before the service uses it`);
}

/**
 * Records, through a middleware on every SDK client the service creates, each AWS call a function
 * makes while the tests run (calls made outside a function, such as test setup, are not recorded).
 */
export function startRecording(testName: () => string) {
  const calls: AwsCall[] = [];
  const createdKeys: string[] = [];
  setClientHook((client) => {
    (client as { middlewareStack: { add: (mw: unknown, options: unknown) => void } }).middlewareStack.add(
      (next: (args: unknown) => Promise<unknown>, context: { clientName?: string; commandName?: string }) =>
        async (args: { input: Input }) => {
          const by = currentInvocation();
          if (by) {
            for (const call of authorizationsOf(String(context.clientName), String(context.commandName), args.input)) {
              calls.push({ by, ...call, test: testName() });
            }
          }
          const result = await next(args);
          const created = (result as { output?: { KeyMetadata?: { Arn?: string } } }).output?.KeyMetadata?.Arn;
          if (by && context.commandName === 'CreateKeyCommand' && created) createdKeys.push(created);
          return result;
        },
      // After the document client has marshalled its input, so table and index names are final.
      { step: 'serialize', priority: 'low', name: 'record-aws-calls' },
    );
  });
  return {
    /** What this process recorded so far. */
    recording: (): Recording => ({ calls: [...calls], createdKeys: [...createdKeys], invocations: invocationCounts() }),
    stop: () => setClientHook(undefined),
  };
}

/** Writes one process's recording into the run's folder. */
export function saveRecording(dir: string, name: string, recording: Recording) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(recording));
}

/** Every recording saved in the run's folder, merged. */
export function loadRecordings(dir: string): Recording {
  const merged: Recording = { calls: [], createdKeys: [], invocations: [] };
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const { calls, createdKeys = [], invocations } = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Recording;
    merged.calls.push(...calls);
    merged.createdKeys.push(...createdKeys);
    merged.invocations.push(...invocations);
  }
  return merged;
}

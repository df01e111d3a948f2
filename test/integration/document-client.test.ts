import { createHash, createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as sdkCommands from '@aws-sdk/lib-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as commands from '#shared/data/commands';
import { GetCommand, PutCommand, ScanCommand } from '#shared/data/commands';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { awsClientConfig, AWS_CALL_LIMITS, localEndpointConfig, setClientHook } from '#shared/aws/client-config';
import { createDocumentClient } from '#shared/data/dynamodb';
import { DocumentClient } from '#shared/data/document-client';
import { createTable } from '#local/dynamodb-local';

// The repositories' client (shared/data/document-client.ts) sends the document client's commands
// without the SDK's middleware stack. Its answers are checked against the SDK's own document client,
// which is not built from it: the same operations on two tables of DynamoDB Local, one through each,
// must answer the same and leave the same items. Its requests are checked against DynamoDB's
// protocol and an independent SigV4 computation, its retries against a server that fails on purpose.

const endpoint = inject('dynamodbEndpoint');

/** The SDK's document client as the service configured it before (the reference). */
function sdkClient() {
  return DynamoDBDocumentClient.from(new DynamoDBClient({ ...awsClientConfig(), ...localEndpointConfig(endpoint) }), {
    marshallOptions: { removeUndefinedValues: true },
  });
}

type CommandName = 'GetCommand' | 'PutCommand' | 'UpdateCommand' | 'DeleteCommand' | 'QueryCommand' | 'ScanCommand'
  | 'BatchGetCommand' | 'BatchWriteCommand' | 'TransactGetCommand' | 'TransactWriteCommand';
type InputOf<N extends CommandName> = ConstructorParameters<(typeof commands)[N]>[0];

/** An answer without its request metadata (request ids and timings differ between any two calls). */
function answer(output: object, table?: string, other?: string) {
  const { $metadata: _metadata, ...rest } = output as { $metadata?: unknown };
  const text = JSON.stringify(rest);
  return JSON.parse(table && other ? text.replaceAll(table, other) : text) as unknown;
}

describe('DocumentClient answers as the SDK document client does', () => {
  const ours = createDocumentClient({ endpoint });
  const sdk = sdkClient();
  const oursTable = `test-${randomUUID()}`;
  const sdkTable = `test-${randomUUID()}`;
  beforeAll(() => Promise.all([createTable(endpoint, oursTable), createTable(endpoint, sdkTable)]));
  afterAll(() => {
    ours.destroy();
    sdk.destroy();
  });

  /** Runs the same command, its input made for each table, through each client; both answers, ours with its table renamed. */
  async function both<N extends CommandName>(name: N, input: (table: string) => InputOf<N>) {
    const mine = await ours.send(new commands[name](input(oursTable) as never));
    const theirs = await sdk.send(new sdkCommands[name](input(sdkTable) as never) as never);
    return { mine: answer(mine, oursTable, sdkTable), theirs: answer(theirs as object) };
  }

  const item = {
    pk: 'USER#1', sk: 'PROFILE', gsi1pk: 'EMAIL#a@example.com', gsi1sk: 'USER#1',
    name: 'Ann', age: 41, ratio: 0.25, big: 2 ** 40, active: true, nothing: null, gone: undefined,
    tags: ['a', 'b'], nested: { list: [1, { deep: 'x' }], empty: {}, flag: false }, set: new Set(['x', 'y']), bytes: new Uint8Array([1, 2, 3]),
  };

  it('PutItem, GetItem (consistent, with a projection), and the items they leave', async () => {
    const put = await both('PutCommand', (TableName) => ({ TableName, Item: item }));
    expect(put.mine).toEqual(put.theirs);
    const got = await both('GetCommand', (TableName) => ({ TableName, Key: { pk: 'USER#1', sk: 'PROFILE' }, ConsistentRead: true }));
    expect(got.mine).toEqual(got.theirs);
    expect(got.mine).toMatchObject({ Item: { name: 'Ann', age: 41, big: 2 ** 40, nothing: null, nested: { list: [1, { deep: 'x' }] } } });
    expect(got.mine).not.toHaveProperty('Item.gone');
    const projected = await both('GetCommand', (TableName) => ({
      TableName, Key: { pk: 'USER#1', sk: 'PROFILE' }, ProjectionExpression: '#n, nested.#l', ExpressionAttributeNames: { '#n': 'name', '#l': 'list' },
    }));
    expect(projected.mine).toEqual(projected.theirs);
    expect(projected.mine).toEqual({ Item: { name: 'Ann', nested: { list: [1, { deep: 'x' }] } } });
    // A set and bytes come back as the SDK gives them: compare them as the SDK's own objects.
    const mine = await ours.send(new GetCommand({ TableName: oursTable, Key: { pk: 'USER#1', sk: 'PROFILE' } }));
    expect(mine.Item?.set).toEqual(new Set(['x', 'y']));
    expect(mine.Item?.bytes).toEqual(new Uint8Array([1, 2, 3]));
  });

  it('UpdateItem with ReturnValues, a condition, names and values', async () => {
    const updated = await both('UpdateCommand', (TableName) => ({
      TableName, Key: { pk: 'USER#1', sk: 'PROFILE' },
      UpdateExpression: 'SET #n = :name, nested.flag = :t ADD age :one REMOVE ratio',
      ConditionExpression: 'attribute_exists(pk) AND age = :age',
      ExpressionAttributeNames: { '#n': 'name' },
      ExpressionAttributeValues: { ':name': 'Bea', ':t': true, ':one': 1, ':age': 41 },
      ReturnValues: 'ALL_NEW',
    }));
    expect(updated.mine).toEqual(updated.theirs);
    expect(updated.mine).toMatchObject({ Attributes: { name: 'Bea', age: 42, nested: { flag: true } } });
  });

  it('Query on the index, page by page, and Scan', async () => {
    for (const n of [1, 2, 3, 4, 5]) {
      await both('PutCommand', (TableName) => ({ TableName, Item: { pk: `DEVICE#${n}`, sk: 'DEVICE', gsi1pk: 'OWNER#1', gsi1sk: `DEVICE#${n}`, n } }));
    }
    const first = await both('QueryCommand', (TableName) => ({
      TableName, IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': 'OWNER#1' }, Limit: 2,
    }));
    expect(first.mine).toEqual(first.theirs);
    const startKey = (first.mine as { LastEvaluatedKey: Record<string, unknown> }).LastEvaluatedKey;
    expect(startKey).toEqual({ pk: 'DEVICE#2', sk: 'DEVICE', gsi1pk: 'OWNER#1', gsi1sk: 'DEVICE#2' });
    const second = await both('QueryCommand', (TableName) => ({
      TableName, IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': 'OWNER#1' }, ExclusiveStartKey: startKey,
    }));
    expect(second.mine).toEqual(second.theirs);
    expect((second.mine as { Items: unknown[] }).Items).toHaveLength(3);
    const scanned = await both('ScanCommand', (TableName) => ({ TableName, FilterExpression: 'n > :two', ExpressionAttributeValues: { ':two': 2 } }));
    expect(scanned.mine).toEqual(scanned.theirs);
  });

  it('BatchWriteItem, BatchGetItem, TransactWriteItems, TransactGetItems, DeleteItem', async () => {
    const written = await both('BatchWriteCommand', (TableName) => ({ RequestItems: { [TableName]: [
      { PutRequest: { Item: { pk: 'B#1', sk: 'B', v: [1, 2] } } },
      { PutRequest: { Item: { pk: 'B#2', sk: 'B', v: { a: 'b' } } } },
      { DeleteRequest: { Key: { pk: 'DEVICE#5', sk: 'DEVICE' } } },
    ] } }));
    expect(written.mine).toEqual(written.theirs);
    const read = await both('BatchGetCommand', (TableName) => ({ RequestItems: { [TableName]: { Keys: [{ pk: 'B#1', sk: 'B' }, { pk: 'B#2', sk: 'B' }, { pk: 'NONE', sk: 'B' }], ConsistentRead: true } } }));
    const byKey = (output: unknown) => (output as { Responses: Record<string, { pk: string }[]> }).Responses[sdkTable]!.sort((a, b) => a.pk.localeCompare(b.pk));
    expect(byKey(read.mine)).toEqual(byKey(read.theirs));
    expect(byKey(read.mine)).toEqual([{ pk: 'B#1', sk: 'B', v: [1, 2] }, { pk: 'B#2', sk: 'B', v: { a: 'b' } }]);
    const transaction = await both('TransactWriteCommand', (TableName) => ({ TransactItems: [
      { Put: { TableName, Item: { pk: 'T#1', sk: 'T', at: 1 }, ConditionExpression: 'attribute_not_exists(pk)' } },
      { Update: { TableName, Key: { pk: 'B#1', sk: 'B' }, UpdateExpression: 'SET w = :w', ExpressionAttributeValues: { ':w': ['z'] } } },
      { Delete: { TableName, Key: { pk: 'B#2', sk: 'B' } } },
      { ConditionCheck: { TableName, Key: { pk: 'USER#1', sk: 'PROFILE' }, ConditionExpression: 'age = :age', ExpressionAttributeValues: { ':age': 42 } } },
    ] }));
    expect(transaction.mine).toEqual(transaction.theirs);
    const got = await both('TransactGetCommand', (TableName) => ({ TransactItems: [
      { Get: { TableName, Key: { pk: 'T#1', sk: 'T' } } }, { Get: { TableName, Key: { pk: 'B#1', sk: 'B' } } },
    ] }));
    expect(got.mine).toEqual(got.theirs);
    expect(got.mine).toEqual({ Responses: [{ Item: { pk: 'T#1', sk: 'T', at: 1 } }, { Item: { pk: 'B#1', sk: 'B', v: [1, 2], w: ['z'] } }] });
    const deleted = await both('DeleteCommand', (TableName) => ({ TableName, Key: { pk: 'T#1', sk: 'T' }, ReturnValues: 'ALL_OLD' }));
    expect(deleted.mine).toEqual(deleted.theirs);
    expect(deleted.mine).toEqual({ Attributes: { pk: 'T#1', sk: 'T', at: 1 } });
  });

  it('leaves the same items as the SDK', async () => {
    const sorted = ({ Items = [] }: { Items?: Record<string, unknown>[] }) => Items.sort((a, b) => `${String(a.pk)}${String(a.sk)}`.localeCompare(`${String(b.pk)}${String(b.sk)}`));
    const mine = sorted(await ours.send(new ScanCommand({ TableName: oursTable, ConsistentRead: true })));
    expect(mine.length).toBeGreaterThan(5);
    expect(mine).toEqual(sorted(await sdk.send(new sdkCommands.ScanCommand({ TableName: sdkTable, ConsistentRead: true }))));
  });

  it('fails as the SDK fails: a condition (with the old item in DynamoDB JSON), a cancelled transaction, a bad request', async () => {
    const failure = async <N extends CommandName>(name: N, input: (table: string) => InputOf<N>) => {
      const caught = async (send: Promise<unknown>) => send.then(() => { throw new Error('succeeded'); }, (error: unknown) => error as Record<string, unknown>);
      const mine = await caught(ours.send(new commands[name](input(oursTable) as never)));
      const theirs = await caught(sdk.send(new sdkCommands[name](input(sdkTable) as never) as never));
      const shape = (error: Record<string, unknown>) => ({
        name: error.name, message: error.message, fault: error.$fault, status: (error.$metadata as { httpStatusCode: number }).httpStatusCode,
        Item: error.Item, CancellationReasons: error.CancellationReasons,
      });
      expect(mine).toBeInstanceOf(Error);
      expect(shape(mine)).toEqual(shape(theirs));
      return mine;
    };
    const condition = await failure('PutCommand', (TableName) => ({
      TableName, Item: { pk: 'USER#1', sk: 'PROFILE' }, ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }));
    expect(condition).toMatchObject({ name: 'ConditionalCheckFailedException', Item: { name: { S: 'Bea' } }, $metadata: { attempts: 1 } });
    const cancelled = await failure('TransactWriteCommand', (TableName) => ({ TransactItems: [
      { Put: { TableName, Item: { pk: 'X#1', sk: 'X' } } },
      { ConditionCheck: { TableName, Key: { pk: 'USER#1', sk: 'PROFILE' }, ConditionExpression: 'age = :age', ExpressionAttributeValues: { ':age': 1 } } },
    ] }));
    expect(cancelled).toMatchObject({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }] });
    const invalid = await failure('UpdateCommand', (TableName) => ({ TableName, Key: { pk: 'USER#1', sk: 'PROFILE' }, UpdateExpression: 'SET = nonsense' }));
    expect(invalid).toMatchObject({ name: 'ValidationException', $fault: 'client', $metadata: { attempts: 1 } });
    expect((await ours.send(new GetCommand({ TableName: oursTable, Key: { pk: 'X#1', sk: 'X' } }))).Item).toBeUndefined();
  });
});

describe('DocumentClient middlewares', () => {
  const table = `test-${randomUUID()}`;
  beforeAll(() => createTable(endpoint, table));

  it('shows the document input at initialize, the marshalled input at serialize, in the order added; a removed one no longer runs', async () => {
    const client = createDocumentClient({ endpoint });
    const seen: string[] = [];
    client.middlewareStack.add((next, context) => async (args) => {
      seen.push(`outer ${context.clientName} ${context.commandName} ${JSON.stringify(args.input.Key)}`);
      return next(args);
    }, { step: 'initialize', name: 'outer' });
    client.middlewareStack.add((next) => async (args) => {
      seen.push(`inner ${JSON.stringify(args.input.Key)}`);
      return next(args);
    }, { step: 'initialize', name: 'inner' });
    client.middlewareStack.add((next) => async (args) => {
      seen.push(`serialize ${JSON.stringify(args.input.Key)}`);
      return next(args);
    }, { step: 'serialize', name: 'wire' });

    await client.send(new GetCommand({ TableName: table, Key: { pk: 'a', sk: 'b' } }));
    expect(client.middlewareStack.remove('inner')).toBe(true);
    expect(client.middlewareStack.remove('inner')).toBe(false);
    await client.send(new GetCommand({ TableName: table, Key: { pk: 'c', sk: 'd' } }));
    client.destroy();

    expect(seen).toEqual([
      'outer DynamoDBClient GetItemCommand {"pk":"a","sk":"b"}',
      'inner {"pk":"a","sk":"b"}',
      'serialize {"pk":{"S":"a"},"sk":{"S":"b"}}',
      'outer DynamoDBClient GetItemCommand {"pk":"c","sk":"d"}',
      'serialize {"pk":{"S":"c"},"sk":{"S":"d"}}',
    ]);
  });

  it('is handed to the client hook when made (the local runtime records every AWS call with it)', async () => {
    const operations: string[] = [];
    setClientHook((client) => {
      (client as DocumentClient).middlewareStack.add((next, context) => async (args) => {
        operations.push(`${context.clientName} ${context.commandName} ${String(args.input.TableName)}`);
        return next(args);
      }, { step: 'serialize', name: 'hooked' });
    });
    let client: DocumentClient;
    try {
      client = createDocumentClient({ endpoint });
    } finally {
      setClientHook(undefined);
    }
    await client.send(new PutCommand({ TableName: table, Item: { pk: 'h', sk: 'h' } }));
    client.destroy();
    expect(operations).toEqual([`DynamoDBClient PutItemCommand ${table}`]);
  });

  it('refuses a step it does not run, and a command that is not one of shared/data/commands.ts', async () => {
    const client = createDocumentClient({ endpoint });
    expect(() => client.middlewareStack.add((next) => next, { step: 'finalizeRequest', name: 'late' })).toThrow(/initialize.*serialize/);
    const sdkCommand = new sdkCommands.GetCommand({ TableName: table, Key: { pk: 'a', sk: 'b' } });
    await expect(client.send(sdkCommand as unknown as GetCommand)).rejects.toThrow(/commands of shared\/data\/commands.ts only/);
    client.destroy();
  });
});

/** A loopback server that answers each request with the next of `answers` (status and JSON body), recording the requests. */
async function scriptedServer(answers: { status: number; body: object }[]) {
  const requests: { headers: IncomingMessage['headers']; body: string; method: string; url: string }[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ headers: request.headers, body: Buffer.concat(chunks).toString(), method: request.method!, url: request.url! });
      const { status, body } = answers[Math.min(requests.length - 1, answers.length - 1)]!;
      response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': `req-${requests.length}` }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const fault = (type: string, message = 'no') => ({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message });

describe('DocumentClient requests and retries', () => {
  const servers: Awaited<ReturnType<typeof scriptedServer>>[] = [];
  const serverOf = async (answers: { status: number; body: object }[]) => {
    const server = await scriptedServer(answers);
    servers.push(server);
    return server;
  };
  afterAll(() => Promise.all(servers.map((server) => server.close())));

  it('sends DynamoDB\'s JSON protocol, signed with SigV4 as AWS computes it (session token included)', async () => {
    // Prepare
    const server = await serverOf([{ status: 200, body: { Item: { pk: { S: 'a' }, n: { N: '7' } } } }]);
    const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token' };
    const client = new DocumentClient({ endpoint: server.endpoint, region: 'eu-west-1', credentials });

    // Act
    const output = await client.send(new GetCommand({ TableName: 'tbl', Key: { pk: 'a', sk: 'b' }, ConsistentRead: true }));
    client.destroy();

    // Assess: the answer, and the request as DynamoDB reads it
    expect(output).toEqual({ Item: { pk: 'a', n: 7 } });
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', url: '/' });
    expect(request!.headers).toMatchObject({ 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.GetItem', 'x-amz-security-token': 'session-token' });
    expect(JSON.parse(request!.body)).toEqual({ TableName: 'tbl', Key: { pk: { S: 'a' }, sk: { S: 'b' } }, ConsistentRead: true });
    expect(request!.headers.authorization).toBe(independentSigV4(request!, credentials, 'eu-west-1', 'dynamodb'));
  });

  it('retries a server error and throttling within AWS_CALL_LIMITS.maxAttempts, and not a client error', async () => {
    const ok = { status: 200, body: {} };
    const outage = await serverOf([{ status: 500, body: fault('InternalServerError') }, ok]);
    const throttled = await serverOf([{ status: 400, body: fault('ThrottlingException') }, ok]);
    const down = await serverOf([{ status: 503, body: fault('ServiceUnavailable') }]);
    const invalid = await serverOf([{ status: 400, body: fault('ValidationException', 'One or more parameter values were invalid') }, ok]);
    const put = (server: { endpoint: string }) => {
      const client = createDocumentClient({ endpoint: server.endpoint });
      return client.send(new PutCommand({ TableName: 't', Item: { pk: 'a', sk: 'b' } })).finally(() => client.destroy());
    };

    await expect(put(outage)).resolves.toEqual({});
    await expect(put(throttled)).resolves.toEqual({});
    await expect(put(down)).rejects.toMatchObject({ name: 'ServiceUnavailable', $fault: 'server', $metadata: { httpStatusCode: 503, attempts: AWS_CALL_LIMITS.maxAttempts, requestId: `req-${AWS_CALL_LIMITS.maxAttempts}` } });
    await expect(put(invalid)).rejects.toMatchObject({ name: 'ValidationException', message: 'One or more parameter values were invalid', $metadata: { attempts: 1 } });

    expect([outage, throttled, down, invalid].map((server) => server.requests.length)).toEqual([2, 2, AWS_CALL_LIMITS.maxAttempts, 1]);
  });
});

/**
 * The Authorization header of AWS Signature Version 4 for a request as the server received it,
 * computed here from the specification (not with the SDK's signer): the headers it lists as signed,
 * canonicalized, the body's hash, the scope of its date, region and service.
 */
function independentSigV4(
  request: { headers: IncomingMessage['headers']; body: string; method: string; url: string },
  credentials: { accessKeyId: string; secretAccessKey: string }, region: string, service: string,
): string {
  const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');
  const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
  const amzDate = String(request.headers['x-amz-date']);
  const date = amzDate.slice(0, 8);
  const signed = /SignedHeaders=([^,]+)/.exec(String(request.headers.authorization))![1]!.split(';');
  expect(signed).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'x-amz-target', 'x-amz-security-token', 'content-type']));
  const canonicalHeaders = signed.map((name) => `${name}:${String(request.headers[name]).trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalRequest = [request.method, request.url, '', canonicalHeaders, signed.join(';'), sha256(request.body)].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, date), region), service), 'aws4_request');
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  return `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signed.join(';')}, Signature=${signature}`;
}

import { createServer, type Server, type Socket } from 'node:net';
import { GetItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '#shared/data/commands';
import { KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { SendEmailCommand, SESClient } from '@aws-sdk/client-ses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AWS_CALL_LIMITS, awsClientConfig } from '#shared/aws/client-config';
import { createDocumentClient } from '#shared/data/dynamodb';
import { isTransientStorageError } from '#shared/data/storage-errors';
import { toAppError } from '#shared/http/http';

// The real SDK clients, configured as the service configures them, against a loopback server that
// plays a dependency gone wrong: it accepts connections and then never answers, stops in the middle
// of a response, or hangs up. Each call must fail within the budget, as an error the HTTP wrappers
// turn into 503 with Retry-After.

/** The longest a stalled call may take: the function must still answer well inside 3 s. */
const BUDGET_MS = 2500;

type Behaviour = 'silent' | 'stalled-body' | 'hang-up';

/** A server that reads requests and behaves as named; counts the requests it received. */
async function misbehavingServer(behaviour: Behaviour) {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (chunk) => {
      if (!chunk.toString('latin1').match(/^(GET|POST) /)) return;
      requests += 1;
      if (behaviour === 'stalled-body') {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: 100\r\n\r\n{"Item":');
      } else if (behaviour === 'hang-up') {
        socket.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    get requests() {
      return requests;
    },
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

const local = (endpoint: string) => ({
  ...awsClientConfig(),
  endpoint,
  region: 'eu-west-1',
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
});

const CALLS = {
  DynamoDB: (endpoint: string) => {
    const client = new DynamoDBClient(local(endpoint));
    return { client, call: () => client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' }, sk: { S: 'b' } } })) };
  },
  // The repositories' client (shared/data/document-client.ts), made as the service makes it.
  DocumentClient: (endpoint: string) => {
    const client = createDocumentClient({ endpoint, region: 'eu-west-1' });
    return { client, call: () => client.send(new GetCommand({ TableName: 't', Key: { pk: 'a', sk: 'b' } })) };
  },
  KMS: (endpoint: string) => {
    const client = new KMSClient(local(endpoint));
    return {
      client,
      call: () => client.send(new SignCommand({
        KeyId: 'alias/test', Message: Buffer.from('data'), MessageType: 'RAW', SigningAlgorithm: 'RSASSA_PKCS1_V1_5_SHA_256',
      })),
    };
  },
  SES: (endpoint: string) => {
    const client = new SESClient(local(endpoint));
    return {
      client,
      call: () => client.send(new SendEmailCommand({
        Source: 'service@example.com',
        Destination: { ToAddresses: ['user@example.com'] },
        Message: { Subject: { Data: 'Subject' }, Body: { Text: { Data: 'Text' } } },
      })),
    };
  },
} as const;

/** Runs the call, and returns what it threw and after how long. */
async function failure(call: () => Promise<unknown>) {
  const started = performance.now();
  try {
    await call();
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  throw new Error('the call succeeded');
}

describe.concurrent('AWS client limits (awsClientConfig)', () => {
  const servers: Awaited<ReturnType<typeof misbehavingServer>>[] = [];
  const serverFor = async (behaviour: Behaviour) => {
    const server = await misbehavingServer(behaviour);
    servers.push(server);
    return server;
  };
  afterAll(() => Promise.all(servers.map((server) => server.close())));

  it('keeps a stalled call well inside 3 s', () => {
    expect(AWS_CALL_LIMITS.maxAttempts * Math.max(AWS_CALL_LIMITS.requestTimeoutMs, AWS_CALL_LIMITS.connectionTimeoutMs) + 100).toBeLessThan(BUDGET_MS);
  });

  describe.each(Object.keys(CALLS) as (keyof typeof CALLS)[])('%s', (service) => {
    let silent: Awaited<ReturnType<typeof misbehavingServer>>;
    beforeAll(async () => {
      silent = await serverFor('silent');
    });

    it(`gives up on a dependency that never answers after ${AWS_CALL_LIMITS.maxAttempts} attempts, as a transient error that answers 503`, async () => {
      // Prepare
      const { client, call } = CALLS[service](silent.endpoint);

      // Act
      const { error, ms } = await failure(call);
      client.destroy();

      // Assess
      expect(error).toMatchObject({ name: 'TimeoutError', $metadata: { attempts: AWS_CALL_LIMITS.maxAttempts } });
      expect(silent.requests).toBe(AWS_CALL_LIMITS.maxAttempts);
      expect(ms).toBeGreaterThanOrEqual(AWS_CALL_LIMITS.maxAttempts * AWS_CALL_LIMITS.requestTimeoutMs);
      expect(ms).toBeLessThan(BUDGET_MS);
      expect(isTransientStorageError(error)).toBe(true);
      const answer = toAppError(error);
      expect(answer).toMatchObject({ status: 503, code: 'temporarily_unavailable', headers: { 'retry-after': expect.stringMatching(/^[1-9]\d*$/) } });
    }, 6000);
  });

  it.each(['DynamoDB', 'DocumentClient'] as const)('%s gives up on a response whose body stops coming', async (service) => {
    // Prepare
    const server = await serverFor('stalled-body');
    const { client, call } = CALLS[service](server.endpoint);

    // Act
    const { error, ms } = await failure(call);
    client.destroy();

    // Assess
    expect(error).toMatchObject({ name: 'TimeoutError' });
    expect(ms).toBeLessThan(BUDGET_MS);
    expect(toAppError(error).status).toBe(503);
  }, 6000);

  it.each(['DynamoDB', 'DocumentClient'] as const)('%s answers 503 at once for a dependency that hangs up', async (service) => {
    // Prepare
    const server = await serverFor('hang-up');
    const { client, call } = CALLS[service](server.endpoint);

    // Act
    const { error, ms } = await failure(call);
    client.destroy();

    // Assess: node-http-handler reports "socket hang up" (ECONNRESET) as a TimeoutError.
    expect(error).toMatchObject({ code: 'ECONNRESET' });
    expect(server.requests).toBe(AWS_CALL_LIMITS.maxAttempts);
    expect(ms).toBeLessThan(AWS_CALL_LIMITS.requestTimeoutMs);
    expect(toAppError(error).status).toBe(503);
  }, 6000);
});

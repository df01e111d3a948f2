import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '#infra/local/dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

/** Starts one DynamoDB Local for the whole run and stops it (Java child included) afterwards. */
export default async function setup(project: TestProject) {
  const ddb = await startDynamoDbLocal();
  project.provide('dynamodbEndpoint', ddb.endpoint);
  return () => ddb.stop();
}

import { rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '#local/dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    /** Folder where each test file saves the AWS calls its functions made (see record-aws-calls.ts). */
    awsCallsDir: string;
  }
}

/**
 * Starts one DynamoDB Local for the whole run and stops it (Java child included) afterwards, when
 * it also removes the run's AWS-call recordings (teardown comes after every project has run).
 */
export default async function setup(project: TestProject) {
  const ddb = await startDynamoDbLocal();
  project.provide('dynamodbEndpoint', ddb.endpoint);
  return async () => {
    await ddb.stop();
    rmSync(project.config.provide.awsCallsDir as string, { recursive: true, force: true });
  };
}

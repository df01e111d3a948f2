import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Counts the DynamoDB requests a client sends (by operation), through an SDK middleware, so tests
 * and the benchmark can assert how many requests a call costs.
 */
export function countRequests(doc: DynamoDBDocumentClient) {
  const operations: string[] = [];
  const name = `count-requests-${Math.random()}`;
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      operations.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name },
  );
  return {
    get total() {
      return operations.length;
    },
    operations,
    reset() {
      operations.length = 0;
    },
    detach() {
      doc.middlewareStack.remove(name);
    },
  };
}

import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Counts the DynamoDB requests a client sends (by operation), through an SDK middleware, so tests
 * and the benchmark can assert how many requests a call costs; with `keepInputs`, also what each
 * request asked for (a test's, not a benchmark's: the inputs are kept until `reset`).
 */
export function countRequests(doc: DynamoDBDocumentClient, { keepInputs = false } = {}) {
  const operations: string[] = [];
  /** With `keepInputs`: the input of each request, in the order of `operations`. */
  const inputs: unknown[] = [];
  const name = `count-requests-${Math.random()}`;
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      operations.push(String(context.commandName));
      if (keepInputs) inputs.push(args.input);
      return next(args);
    },
    { step: 'initialize', name },
  );
  return {
    get total() {
      return operations.length;
    },
    operations,
    inputs,
    reset() {
      operations.length = 0;
      inputs.length = 0;
    },
    detach() {
      doc.middlewareStack.remove(name);
    },
  };
}

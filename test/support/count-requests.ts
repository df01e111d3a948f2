import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DocumentClient } from '#shared/data/document-client';
import { currentInvocation } from '#local/invocation-context';
import type { ApiName } from '#shared/routes';

/**
 * Counts the DynamoDB requests a client sends (by operation), through an SDK middleware, so tests
 * and the benchmark can assert how many requests a call costs; with `keepInputs`, also what each
 * request asked for (a test's, not a benchmark's: the inputs are kept until `reset`). With `api`,
 * only the requests of that API's functions (the local service runs every function in one process,
 * over shared/runtime.ts's one client: the resource API's calls make the local authorizer fetch the
 * JWKS from the auth API, whose requests are not theirs).
 */
export function countRequests(client: DocumentClient | DynamoDBDocumentClient, { keepInputs = false, api }: { keepInputs?: boolean; api?: ApiName } = {}) {
  // Both clients take the SDK's middleware shape at the initialize step.
  const stack = client.middlewareStack as DocumentClient['middlewareStack'];
  const operations: string[] = [];
  /** With `keepInputs`: the input of each request, in the order of `operations`. */
  const inputs: unknown[] = [];
  const name = `count-requests-${Math.random()}`;
  stack.add(
    (next, context) => async (args) => {
      if (api === undefined || currentInvocation()?.api === api) {
        operations.push(String(context.commandName));
        if (keepInputs) inputs.push(args.input);
      }
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
      stack.remove(name);
    },
  };
}

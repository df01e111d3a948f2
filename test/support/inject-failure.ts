import { randomUUID } from 'node:crypto';
import type { DocumentClient } from '#shared/data/document-client';

/**
 * Runs `act` with `failure` thrown instead of the first `times` requests of `command` (e.g.
 * `UpdateItemCommand`) that `doc` sends, and settles it: a storage failure or conflict on demand.
 */
export async function withFailure<T>(
  doc: DocumentClient, command: string, failure: () => Error, act: () => Promise<T>, times = Infinity,
): Promise<PromiseSettledResult<T>> {
  const name = `fail-${randomUUID()}`;
  let failed = 0;
  doc.middlewareStack.add((next, context) => async (args) => {
    if (context.commandName === command && failed < times) {
      failed++;
      throw failure();
    }
    return next(args);
  }, { step: 'initialize', name });
  try {
    return (await Promise.allSettled([act()]))[0]!;
  } finally {
    doc.middlewareStack.remove(name);
  }
}

// What the code that touches the table needs from IAM. Every repository declares, next to its
// methods, the DynamoDB actions each method sends; the stack grants a function the union of what the
// operations its handler uses declare (infra/function-grants.ts). The IAM test
// (test/infra/iam-grants.test.ts) is the arbiter: it checks the deployed roles against the calls the
// functions really make.

/** DynamoDB actions a function may be granted, on the table (no wildcard). */
export type TableAction = 'GetItem' | 'BatchGetItem' | 'Query' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'ConditionCheckItem';

/**
 * What one data operation needs: the actions it sends (a transaction needs the action of each of its
 * parts: PutItem, UpdateItem, DeleteItem, ConditionCheckItem), whether it queries the table's GSI1,
 * and, for a read described for a combined BatchGetItem or an item handed to someone else's
 * transaction, the action under which it will be sent.
 */
export interface TableOperation {
  readonly actions: readonly TableAction[];
  readonly index?: boolean;
  /**
   * The operation adds, removes or replaces a way to sign in: a credential or a second factor, the
   * password or the e-mail address (or marks the account for deletion). A page whose function uses
   * one asks for a recent sign-in (EndpointDeclaration.recentSignIn): test/unit/layout.test.ts
   * holds every function to it, from these marks.
   */
  readonly credential?: true;
}

/** A declaration for every method of a repository: the compiler refuses a method without one. */
export type RepoOperations<Repo> = { readonly [Method in keyof Repo]: TableOperation };

/** The grant that covers all of these needs. */
export function unionOfOperations(needs: readonly TableOperation[]): { actions: TableAction[]; index: boolean } {
  const actions = new Set<TableAction>();
  for (const need of needs) for (const action of need.actions) actions.add(action);
  return { actions: [...actions].sort(), index: needs.some((need) => need.index === true) };
}

import { endpointOf, type FunctionName } from '#functions/registry';
import { unionOfOperations } from '#shared/data/table-access';
import type { FunctionNeeds } from '#shared/declaration';

// Each function's role is derived from what its declaration says its handler uses (`needs` of
// functions/<area>/<name>.route.ts, FunctionNeeds in shared/declaration.ts): the data operations,
// which are the repository methods it calls, directly or through the services of shared/ (the
// groups of functions/needs.ts); the signing key; account e-mail; the webhook queue. Each
// repository method declares its own DynamoDB actions next to its code (`*_REPO_OPERATIONS`), so when an
// operation changes how it reads or writes (a GetItem becoming a BatchGetItem), every function that
// uses it is granted the new action. test/infra/iam-grants.test.ts checks the result against the
// calls the functions really make.

export type { FunctionNeeds };

/** What function `fn`'s handler uses; throws for an unknown name. */
export const needsOf = (fn: FunctionName): FunctionNeeds => endpointOf(fn).needs;

/** The DynamoDB grant of a function: the union of what its operations declare. */
export function tableGrantOf(fn: FunctionName) {
  return unionOfOperations(needsOf(fn).table ?? []);
}

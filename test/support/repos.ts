import type { RepoDeps } from '#shared/data/dynamodb';
import { createClientRepo } from '#shared/data/client-repo';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createLinkRepo } from '#shared/data/link-repo';
import { createMailLimitRepo } from '#shared/data/mail-limit-repo';
import { createSessionRepo } from '#shared/data/session-repo';
import { createThrottleRepo } from '#shared/data/throttle-repo';
import { createUserRepo } from '#shared/data/user-repo';

/** Every repository of the authorization server on one client and table, for tests that prepare or check the table. */
export function createRepos(deps: RepoDeps) {
  return {
    users: createUserRepo(deps),
    clients: createClientRepo(deps),
    grants: createGrantRepo(deps),
    links: createLinkRepo(deps),
    mailLimits: createMailLimitRepo(deps),
    sessions: createSessionRepo(deps),
    throttle: createThrottleRepo(deps),
  };
}

export type Repos = ReturnType<typeof createRepos>;

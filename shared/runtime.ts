import { ENV, optionalEnv, requireEnv } from '#shared/config';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createUserRepo } from '#shared/data/user-repo';

// Built once per process at module load; fails fast naming a missing variable.
// Deliberately small: resource functions import only this, so they carry no auth code.
const table = requireEnv(ENV.tableName);

/** The process's one DynamoDB document client. */
export const doc = createDocumentClient({ endpoint: optionalEnv(ENV.dynamodbEndpoint) });
export const devices = /* @__PURE__ */ createDeviceRepo({ doc, table });
export const users = /* @__PURE__ */ createUserRepo({ doc, table });

import { createKmsKeyStore } from '#shared/auth/kms-keys';
import { createLocalKeyStore } from '#shared/auth/local-signer';
import { rotateSigningKeys, type RotationOptions } from '#shared/auth/signing-keys';
import { ENV, optionalEnv, requireEnv } from '#shared/config';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createSigningKeyRepo } from '#shared/data/signing-key-repo';
import { logger } from '#shared/log';

const repo = createSigningKeyRepo({ doc: createDocumentClient({ endpoint: optionalEnv(ENV.dynamodbEndpoint) }), table: requireEnv(ENV.tableName) });
const keyId = optionalEnv(ENV.signingKeyId);
const store = keyId
  ? createKmsKeyStore({ initialKeyId: keyId, tagValue: requireEnv(ENV.signingKeyTag), aliasPrefix: requireEnv(ENV.signingKeyAliasPrefix) })
  : createLocalKeyStore(requireEnv(ENV.localSigningKeyFile));

/** What the invoker sends: the EventBridge schedule `{"mode":"when-due"}`, the operator `{"mode":"now"}` or `{"mode":"report"}`. */
export interface RotationEvent {
  mode?: RotationOptions['mode'];
}

/**
 * The signing-key rotation (shared/auth/signing-keys.ts), run hourly by an EventBridge rule and on
 * demand by the operator (`aws lambda invoke`): deletes retired keys, introduces the next key when
 * due (every 90 days, or now), and points the aliases `…-current` and `…-next`. No HTTP route.
 */
export async function handler(event: RotationEvent = {}) {
  const mode = event.mode === 'now' || event.mode === 'report' ? event.mode : 'when-due';
  const outcome = await rotateSigningKeys({ repo, store }, { mode });
  const summary = {
    mode,
    introduced: outcome.introduced?.kid ?? null,
    deleted: outcome.deleted.map((key) => key.kid),
    keys: outcome.keys.map(({ key, phase }) => ({
      kid: key.kid, phase, activateAt: new Date(key.activateAt * 1000).toISOString(),
      retireAt: key.retireAt === undefined ? null : new Date(key.retireAt * 1000).toISOString(),
    })),
  };
  logger.info('signing-key rotation step', summary);
  return summary;
}

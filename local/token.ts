import { issueAccessToken } from '#shared/oauth/access-token';
import { createLocalKeyStore } from '#shared/keys/local-signer';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createSigningKeyRepo } from '#shared/data/signing-key-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { ALL_SCOPES, isScope, parseScopeString } from '#shared/domain/scopes';
import { fail, parseCommandLine, usageError } from '#local/cli';
import { readServiceFacts } from '#local/service';
import { createKeyring } from '#shared/keys/keyring';

// `npm run token -- --user <email> --scope "<scopes>"`: an access token for any account of the
// running local service, signed by the key that signs now (as the token endpoint would after a
// rotation), for trying the API with curl. Local only: it reads the running service's facts
// (.local/service.json, or STATE_DIR/service.json).
const tool = {
  name: 'token',
  usage: `Usage: npm run token -- --user <email> [--scope "${ALL_SCOPES.join(' ')}"] [--expires-in <seconds>]
Prints an access token for an account of the running local service (start it with npm start),
signed with its local key: a demo account or one signed up on the service. Default: every scope,
3600 seconds.`,
};
const { values } = parseCommandLine(tool, {
  options: {
    user: { type: 'string' },
    scope: { type: 'string', default: ALL_SCOPES.join(' ') },
    'expires-in': { type: 'string', default: '3600' },
  },
});
if (!values.user) usageError(tool, 'Name the account with --user <email>');
const scopes = parseScopeString(values.scope);
const unknown = scopes.filter((s) => !isScope(s));
if (unknown.length) fail(`Unknown scope(s): ${unknown.join(', ')}; known: ${ALL_SCOPES.join(', ')}`);
const ttlSeconds = Number(values['expires-in']);
if (!/^\d+$/.test(values['expires-in']) || ttlSeconds < 1 || ttlSeconds > 86_400) {
  usageError(tool, `--expires-in takes a number of seconds from 1 to 86400, not '${values['expires-in']}'`);
}

const facts = (() => {
  try {
    return readServiceFacts();
  } catch (error) {
    return fail((error as Error).message);
  }
})();
const doc = createDocumentClient({ endpoint: facts.dynamodbEndpoint });
const [record, signer] = await Promise.all([
  createUserRepo({ doc, table: facts.tableName }).findUserByEmail(values.user),
  createKeyring({ repo: createSigningKeyRepo({ doc, table: facts.tableName }), source: createLocalKeyStore(facts.signingKeyFile) }).currentSigner(),
]).finally(() => doc.destroy());
if (!record) fail(`No account for ${values.user} on the local service (sign up at ${facts.authUrl}/signup, or use a demo account).`);

console.log(await issueAccessToken(signer, {
  issuer: facts.authUrl,
  audience: facts.apiUrl,
  userId: record.user.id,
  clientId: 'local-cli',
  scopes,
  ttlSeconds,
}));

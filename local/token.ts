import { parseArgs } from 'node:util';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { issueAccessToken } from '#shared/auth/access-token';
import { createLocalKeyStore } from '#shared/auth/local-signer';
import { createKeyring } from '#shared/auth/signing-keys';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createSigningKeyRepo } from '#shared/data/signing-key-repo';
import { ALL_SCOPES, isScope, parseScopeString } from '#shared/domain/scopes';

// `npm run token -- --user <email> --scope "<scopes>"`: an access token for a demo user,
// signed by the local key, for trying the API with curl. Local only: it needs the running
// service's facts (.local/service.json) and key.
const { values } = parseArgs({
  options: {
    user: { type: 'string' },
    scope: { type: 'string', default: ALL_SCOPES.join(' ') },
    'expires-in': { type: 'string', default: '3600' },
  },
});
const stateDir = '.local';
const factsFile = join(stateDir, 'service.json');
if (!values.user || !existsSync(factsFile)) {
  console.error(`Usage: npm run token -- --user <email> [--scope "read_user read_device write_device"] [--expires-in 3600]
Start the service first (npm start): the token is signed with its local key and names its hosts.`);
  process.exit(2);
}
const facts = JSON.parse(readFileSync(factsFile, 'utf8')) as {
  apiUrl: string; authUrl: string; tableName: string; dynamodbEndpoint: string; signingKeyFile: string; users: { id: string; email: string }[];
};
const user = facts.users.find((u) => u.email === values.user!.toLowerCase());
if (!user) {
  console.error(`Unknown user ${values.user}; demo users: ${facts.users.map((u) => u.email).join(', ')}`);
  process.exit(2);
}
const scopes = parseScopeString(values.scope!);
const unknown = scopes.filter((s) => !isScope(s));
if (unknown.length) {
  console.error(`Unknown scope(s): ${unknown.join(', ')}; known: ${ALL_SCOPES.join(', ')}`);
  process.exit(2);
}
// Signed by the key that signs now, as the token endpoint would after a rotation.
const doc = createDocumentClient({ endpoint: facts.dynamodbEndpoint });
const keyring = createKeyring({ repo: createSigningKeyRepo({ doc, table: facts.tableName }), source: createLocalKeyStore(facts.signingKeyFile) });
const signer = await keyring.currentSigner();
doc.destroy();
console.log(await issueAccessToken(signer, {
  issuer: facts.authUrl,
  audience: facts.apiUrl,
  userId: user.id,
  clientId: 'local-cli',
  scopes,
  ttlSeconds: Number(values['expires-in']),
}));

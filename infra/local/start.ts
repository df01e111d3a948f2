import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_USERS, startLocalService } from '#infra/local/service';

// `npm start`: the whole service on this machine. Ctrl-C stops everything, Java child included.
const stateDir = '.local';
const service = await startLocalService({
  apiPort: Number(process.env.API_PORT ?? 3000),
  authPort: Number(process.env.AUTH_PORT ?? 3001),
  dataDir: process.env.DATA_DIR || undefined,
  stateDir,
});

const facts = {
  apiUrl: service.apiUrl,
  authUrl: service.authUrl,
  tableName: service.tableName,
  dynamodbEndpoint: service.dynamodbEndpoint,
  persistence: process.env.DATA_DIR ? `folder ${process.env.DATA_DIR}` : 'in memory',
  users: DEMO_USERS.map(({ user, password, devices }) => ({ id: user.id, email: user.email, password, devices: devices.map((d) => d.id) })),
};
mkdirSync(stateDir, { recursive: true });
writeFileSync(join(stateDir, 'service.json'), `${JSON.stringify(facts, null, 2)}\n`);

console.log(`
Device and User Service is running (data ${facts.persistence}).
  Resource API          ${service.apiUrl}   (also under ${service.apiUrl}/api)
  Authorization server  ${service.authUrl}   (discovery: ${service.authUrl}/.well-known/openid-configuration)
  DynamoDB Local        ${service.dynamodbEndpoint}, table ${service.tableName}
Demo accounts:
${facts.users.map((u) => `  ${u.email.padEnd(20)} password ${u.password.padEnd(22)} ${u.devices.length} devices`).join('\n')}
Try:  TOKEN=$(npm run -s token -- --user alice@example.com --scope "read_user read_device write_device")
      curl -H "Authorization: Bearer $TOKEN" ${service.apiUrl}/devices
The same facts are in ${join(stateDir, 'service.json')}. Press Ctrl-C to stop.
`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping…');
    service.stop().then(() => process.exit(0), (error: unknown) => {
      console.error(error);
      process.exit(1);
    });
  });
}

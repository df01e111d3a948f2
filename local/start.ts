import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClientRepo } from '#shared/data/client-repo';
import { createDocumentClient } from '#shared/data/dynamodb';
import { startExampleApp } from '#local/example-app';
import { DEMO_CLIENT } from '#local/seed';
import { serviceFacts, startLocalService } from '#local/service';

// `npm start`: the whole service on this machine. Ctrl-C stops everything, Java child included.
const stateDir = '.local';
const service = await startLocalService({
  apiPort: Number(process.env.API_PORT ?? 3000),
  authPort: Number(process.env.AUTH_PORT ?? 3001),
  dataDir: process.env.DATA_DIR || undefined,
  stateDir,
});

// The example third-party application, signed up as the demo client (redirect URI on port 8080).
const examplePort = Number(process.env.EXAMPLE_PORT ?? 8080);
const exampleApp = await startExampleApp({
  port: examplePort,
  authUrl: service.authUrl,
  apiUrl: service.apiUrl,
  clientId: DEMO_CLIENT.clientId,
  clientSecret: DEMO_CLIENT.clientSecret,
}).catch(async (error: unknown) => {
  await service.stop();
  if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    console.error(`Port ${examplePort} is in use: set EXAMPLE_PORT to run the example app on another port.`);
    process.exit(1);
  }
  throw error;
});
const redirectUri = `${exampleApp.url}/callback`;
if (!(DEMO_CLIENT.redirectUris as readonly string[]).includes(redirectUri)) {
  // Another port: register its callback too, as a developer would in the developer console.
  const doc = createDocumentClient({ endpoint: service.dynamodbEndpoint });
  const clients = createClientRepo({ doc, table: service.tableName });
  const registered = await clients.getClient(DEMO_CLIENT.clientId);
  if (registered && !registered.redirectUris.includes(redirectUri)) {
    await clients.updateClient(registered.developerId, registered.clientId, { redirectUris: [...registered.redirectUris, redirectUri] });
  }
  doc.destroy();
}

const facts = {
  ...serviceFacts(service, redirectUri),
  persistence: process.env.DATA_DIR ? `folder ${process.env.DATA_DIR}` : 'in memory',
  exampleAppUrl: exampleApp.url,
};
mkdirSync(stateDir, { recursive: true });
writeFileSync(join(stateDir, 'service.json'), `${JSON.stringify(facts, null, 2)}\n`);

console.log(`
Device and User Service is running (data ${facts.persistence}).
  Resource API          ${service.apiUrl}   (also under ${service.apiUrl}/api)
  API reference         ${service.apiUrl}/docs
  Authorization server  ${service.authUrl}   (discovery: ${service.authUrl}/.well-known/openid-configuration)
  DynamoDB Local        ${service.dynamodbEndpoint}, table ${service.tableName}
  Example app           ${exampleApp.url} — sign in as ${facts.users[0]!.email} / ${facts.users[0]!.password}
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
    exampleApp.stop().then(() => service.stop()).then(() => process.exit(0), (error: unknown) => {
      console.error(error);
      process.exit(1);
    });
  });
}

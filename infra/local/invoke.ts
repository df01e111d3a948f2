import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ENV } from '#shared/config';
import { FUNCTIONS, ROUTES, type FunctionName } from '#infra/routes';
import { lambdaContext } from '#infra/local/lambda-context';

// `npm run invoke -- <function> [event.json]`: runs one handler, in this process, against the
// running local service's table (like `sam local invoke`). Without an event file it sends a
// sample event for the function's first route, with the first demo user's verified claims.
const [name, eventFile] = process.argv.slice(2);
const factsFile = join('.local', 'service.json');
if (!name || !(name in FUNCTIONS) || !existsSync(factsFile)) {
  console.error(`Usage: npm run invoke -- <function> [event.json]   (with npm start running)
Functions: ${Object.keys(FUNCTIONS).join(', ')}`);
  process.exit(2);
}
const facts = JSON.parse(readFileSync(factsFile, 'utf8')) as {
  apiUrl: string; authUrl: string; tableName: string; dynamodbEndpoint: string; users: { id: string; devices: string[] }[];
};
Object.assign(process.env, {
  [ENV.tableName]: facts.tableName,
  [ENV.dynamodbEndpoint]: facts.dynamodbEndpoint,
  [ENV.issuer]: facts.authUrl,
  [ENV.audience]: facts.apiUrl,
  [ENV.localSigningKeyFile]: resolve('.local', 'signing-key.pem'),
});

const fn = name as FunctionName;
const event = eventFile ? JSON.parse(readFileSync(eventFile, 'utf8')) as APIGatewayProxyEventV2 : sampleEvent(fn);
const { handler } = await import(resolve(FUNCTIONS[fn].entry)) as { handler: (e: unknown, c: unknown) => Promise<unknown> };
console.log(JSON.stringify(await handler(event, lambdaContext(fn, 'local-invoke')), null, 2));

function sampleEvent(fn: FunctionName): APIGatewayProxyEventV2 {
  const route = ROUTES.find((r) => r.fn === fn) ?? { method: 'GET', path: '/unknown', scopes: undefined };
  const user = facts.users[0]!;
  const path = route.path.replace('{device_id}', user.devices[0] ?? '');
  return {
    version: '2.0',
    routeKey: `${route.method} ${route.path}`,
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    ...(route.path.includes('{device_id}') ? { pathParameters: { device_id: user.devices[0] ?? '' } } : {}),
    ...(route.method === 'PUT' ? { body: JSON.stringify({ active: true }), isBase64Encoded: false } : { isBase64Encoded: false }),
    requestContext: {
      accountId: 'local', apiId: 'local', domainName: 'localhost', domainPrefix: 'localhost', requestId: 'local-invoke',
      routeKey: `${route.method} ${route.path}`, stage: '$default', time: new Date().toUTCString(), timeEpoch: Date.now(),
      http: { method: route.method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'invoke' },
      ...(route.scopes ? { authorizer: { jwt: { claims: { sub: user.id, client_id: 'local-invoke', scope: route.scopes.join(' ') }, scopes: [...route.scopes] } } } : {}),
    },
  } as APIGatewayProxyEventV2;
}

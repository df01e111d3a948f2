import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointOf, endpointTable } from '#functions/registry';
import { ServiceFunction } from '#infra/constructs/service-function';
import { BUNDLE_ENV, ENV } from '#shared/config';
import { openApiDocument } from '#shared/api-docs/openapi';
import { makeEvent } from '../../bench/events.ts';

// Lambda bundles cannot discover the declarations on disk: the two functions that answer from the
// endpoint table (the 405/404 fallback, the OpenAPI document) get it compiled in by esbuild's
// define (infra/bundling.ts). Here both are bundled as CDK bundles them for Lambda and run in a
// fresh Node process that has no ENDPOINT_TABLE: they answer from the table the registry makes.

const API_URL = 'https://api.example.com';
const AUTH_URL = 'https://auth.example.com';

/** Runs `bundle`'s handler on `event` in a fresh Node process with only `env`; its answer. */
function runBundle(bundle: string, event: unknown, env: Record<string, string>): Promise<{ statusCode: number; headers: Record<string, string>; body: string }> {
  const eventFile = join(bundle, '..', 'event.json');
  writeFileSync(eventFile, JSON.stringify(event));
  const script = `const { handler } = await import(${JSON.stringify(bundle)});
const event = JSON.parse((await import('node:fs')).readFileSync(${JSON.stringify(eventFile)}, 'utf8'));
const context = { functionName: 'bundled-table', awsRequestId: 'bundled-table', getRemainingTimeInMillis: () => 10000 };
process.stdout.write('@@answer@@' + JSON.stringify(await handler(event, context)));`;
  return new Promise((done, fail) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) fail(new Error(`${error.message}\n${stderr}`));
      else done(JSON.parse(stdout.slice(stdout.indexOf('@@answer@@') + '@@answer@@'.length)));
    });
  });
}

describe('the endpoint table compiled into the bundles', () => {
  let outdir: string;
  let fallback: string;
  let openApi: string;

  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), 'dus-table-'));
    const app = new App({ outdir });
    const stack = new Stack(app, 'Bundled', { env: { account: '123456789012', region: 'eu-west-1' } });
    // As bundling.test.ts: CDK runs esbuild through npx, which would leave Node's compile cache in the run's temporary folder.
    const compileCache = process.env.NODE_DISABLE_COMPILE_CACHE;
    process.env.NODE_DISABLE_COMPILE_CACHE = '1';
    try {
      new ServiceFunction(stack, 'HttpFallback', { entry: endpointOf('http-fallback').entry, environment: {} });
      new ServiceFunction(stack, 'GetOpenapi', { entry: endpointOf('get-openapi').entry, environment: {} });
      app.synth();
    } finally {
      if (compileCache === undefined) delete process.env.NODE_DISABLE_COMPILE_CACHE;
      else process.env.NODE_DISABLE_COMPILE_CACHE = compileCache;
    }
    const bundles = readdirSync(outdir).filter((name) => name.startsWith('asset.')).map((name) => join(outdir, name, 'index.mjs'));
    expect(bundles).toHaveLength(2);
    // Only the OpenAPI function carries the document's code.
    [openApi, fallback] = [bundles.find((file) => readFileSync(file, 'utf8').includes('3.1.0'))!, bundles.find((file) => !readFileSync(file, 'utf8').includes('3.1.0'))!];
    expect([openApi, fallback].every(Boolean)).toBe(true);
  }, 120_000);

  afterAll(() => {
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  it('needs no ENDPOINT_TABLE where it runs: the fallback answers 405 with the methods of the path, on both APIs', async () => {
    // The registry loaded in this process hands the table over without setting the environment, which children inherit.
    expect(process.env[BUNDLE_ENV.endpointTable]).toBeUndefined();
    const env = { POWERTOOLS_LOG_LEVEL: 'SILENT' };
    const resource = await runBundle(fallback, makeEvent({ routeKey: 'DELETE /devices/{device_id}', path: '/devices/x', method: 'DELETE' }), env);
    expect([resource.statusCode, resource.headers.allow]).toEqual([405, 'GET, PUT']);
    // The auth API's fallback is its `$default` route: the path is matched against the table's, variables included.
    const page = await runBundle(fallback, makeEvent({ routeKey: '$default', path: '/login', method: 'DELETE', host: 'auth.example.com' }), env);
    expect([page.statusCode, page.headers.allow]).toEqual([405, 'GET, POST']);
    const app = await runBundle(fallback, makeEvent({ routeKey: '$default', path: '/developer/apps/some-id', method: 'DELETE', host: 'auth.example.com' }), env);
    expect([app.statusCode, app.headers.allow]).toEqual([405, 'GET, POST']);
    const unknown = await runBundle(fallback, makeEvent({ routeKey: '$default', path: '/nowhere' }), env);
    expect(unknown.statusCode).toBe(404);
  }, 60_000);

  it('serves the OpenAPI document of the declarations', async () => {
    const answer = await runBundle(openApi, makeEvent({ routeKey: 'GET /openapi.json', path: '/openapi.json' }), {
      POWERTOOLS_LOG_LEVEL: 'SILENT', [ENV.audience]: API_URL, [ENV.issuer]: AUTH_URL,
    });
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toEqual(openApiDocument(endpointTable(), API_URL, AUTH_URL));
  }, 60_000);
});

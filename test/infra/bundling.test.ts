import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AWS_ENV, ENV } from '#shared/config';
import { endpointOf } from '#functions/registry';
import { ServiceFunction } from '#infra/constructs/service-function';
import { DEMO_USERS, seedDemoData } from '#local/seed';
import { carriesHttpShims, importsHttpAsEsm } from '../../bench/cold-start-old-path.ts';
import { makeEvent } from '../../bench/events.ts';
import { freshTable } from '../support/service';

// The http/https shims of infra/bundling.ts: the synthesized package of a function, as
// CDK bundles it for Lambda, takes Node's http and https through CommonJS (no ESM import of them),
// and still answers a real request through the AWS SDK from a fresh process, as Lambda runs it.

const ROOT = resolve(import.meta.dirname, '../..');
const DRIVER = join(ROOT, 'bench', 'cold-start-driver.mjs');

describe('the synthesized bundle of a function', () => {
  let outdir: string;
  let code: string;
  let bundle: string;
  let signupPackage: string;

  beforeAll(() => {
    // Bundling on (testApp turns it off for template tests): CDK runs esbuild with BUNDLING's settings.
    outdir = mkdtempSync(join(tmpdir(), 'dus-bundle-'));
    const app = new App({ outdir });
    const stack = new Stack(app, 'Bundled', { env: { account: '123456789012', region: 'eu-west-1' } });
    // CDK bundles as the function is constructed, running esbuild through npx, which would leave
    // Node's compile cache in the run's temporary folder.
    const compileCache = process.env.NODE_DISABLE_COMPILE_CACHE;
    process.env.NODE_DISABLE_COMPILE_CACHE = '1';
    try {
      new ServiceFunction(stack, 'GetUser', { entry: endpointOf('get-user').entry, environment: {} });
      const signup = endpointOf('post-signup');
      new ServiceFunction(stack, 'PostSignup', { entry: signup.entry, environment: {}, lazyModules: signup.lazyModules });
      app.synth();
    } finally {
      if (compileCache === undefined) delete process.env.NODE_DISABLE_COMPILE_CACHE;
      else process.env.NODE_DISABLE_COMPILE_CACHE = compileCache;
    }
    const assets = readdirSync(outdir).filter((name) => name.startsWith('asset.')).map((name) => join(outdir, name));
    expect(assets).toHaveLength(2);
    signupPackage = assets.find((dir) => readdirSync(dir).includes('password-strength.mjs'))!;
    bundle = join(assets.find((dir) => dir !== signupPackage)!, 'index.mjs');
    code = readFileSync(bundle, 'utf8');
  }, 120_000);

  afterAll(() => {
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  it('takes http and https through the CommonJS shims, never through an ESM import', () => {
    expect(code).toMatch(/@aws-sdk|DynamoDB/); // the SDK is in it: the shims have something to replace
    expect(importsHttpAsEsm(code)).toBe(false);
    expect(carriesHttpShims(code)).toBe(true);
  });

  it('ships the password strength estimator beside the sign-up bundle, not in it, and the estimator works', async () => {
    expect(readdirSync(signupPackage).sort()).toEqual(['index.mjs', 'password-strength.mjs']);
    const main = readFileSync(join(signupPackage, 'index.mjs'), 'utf8');
    const estimator = readFileSync(join(signupPackage, 'password-strength.mjs'), 'utf8');
    expect(estimator).toContain('passwords-common'); // the dictionaries are in the estimator's file
    expect(main).not.toContain('passwords-common'); // and not in the bundle loaded at cold start
    expect(statSync(join(signupPackage, 'index.mjs')).size).toBeLessThan(statSync(join(signupPackage, 'password-strength.mjs')).size / 3);
    const { estimateStrength } = (await import(pathToFileURL(join(signupPackage, 'password-strength.mjs')).href)) as typeof import('#shared/domain/password-strength');
    expect(estimateStrength('password123!', []).score).toBeLessThan(3);
    expect(estimateStrength('tide-pool saxophone marmalade', []).score).toBeGreaterThanOrEqual(3);
  });

  it('leaves out of the sign-up bundle the repositories and libraries it never calls', () => {
    const main = readFileSync(join(signupPackage, 'index.mjs'), 'utf8');
    expect(main.includes('attribute_not_exists(pk)')).toBe(true); // the user repository's sign-up transaction is in it
    // The code exchange of the grant repository (shared/runtime.ts builds it; only the functions that use it keep it)
    expect(main.includes('familyId = :familyId')).toBe(false);
    // and the webhook signing library (the webhook repository's module graph reaches it only through signing.ts).
    expect(main.includes('No matching signature found')).toBe(false);
  });

  it('answers a request through the SDK from a fresh Node process (the bench driver, as Lambda would call it)', async () => {
    const { endpoint, table, doc } = await freshTable();
    try {
      await seedDemoData(doc, table);
      const user = DEMO_USERS[0].user;
      const eventFile = join(outdir, 'event.json');
      writeFileSync(eventFile, JSON.stringify(makeEvent({
        routeKey: 'GET /user', path: '/user', claims: { sub: user.id, client_id: 'bundling-test', scope: 'read_user' },
      })));
      const env = {
        PATH: process.env.PATH ?? '', [ENV.tableName]: table, [ENV.issuer]: 'https://auth.example.com', [ENV.audience]: 'https://api.example.com',
        [ENV.dynamodbEndpoint]: endpoint, [AWS_ENV.region]: 'eu-west-1', AWS_LAMBDA_FUNCTION_NAME: 'get-user',
      };
      const stdout = await new Promise<string>((done, fail) => {
        execFile(process.execPath, [DRIVER, bundle, eventFile], { env, timeout: 60_000 }, (error, out, err) => (error ? fail(new Error(`${error.message}\n${err}`)) : done(out)));
      });
      const report = JSON.parse(stdout.split('\n').find((line) => line.startsWith('@@cold-start@@'))!.slice('@@cold-start@@'.length)) as { status: number; socketsAtLoad: string[] };
      expect(report.status).toBe(200);
      expect(report.socketsAtLoad).toEqual([]);
    } finally {
      doc.destroy();
    }
  }, 60_000);
});

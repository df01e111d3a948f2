import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClientRepo } from '#shared/data/client-repo';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createSessionRepo } from '#shared/data/session-repo';
import { readOutbox } from '#shared/email/outbox-mailer';
import { endpointOf, FUNCTIONS, type FunctionName } from '#functions/registry';
import { invokeFunction } from '#local/invoke-function';
import { serviceFacts, type ServiceFacts } from '#local/service';
import { useTestService } from '../support/service';

type Result = APIGatewayProxyStructuredResultV2 & { statusCode: number; headers: Record<string, string> };

/**
 * Every function, each with the sample of its declaration, whose `status` is the answer it must
 * get from a freshly seeded service. The local-only tools last: the outbox's check reads the mail
 * the senders sent before it.
 */
const ORDER: readonly FunctionName[] = [
  ...Object.keys(FUNCTIONS).filter((fn) => !endpointOf(fn).localOnly),
  ...Object.keys(FUNCTIONS).filter((fn) => endpointOf(fn).localOnly),
];

describe('npm run invoke', () => {
  const service = useTestService({ webhooks: {} });
  let facts: ServiceFacts;
  let cwd: string;
  const alice = () => facts.users.find((u) => u.emailConfirmed)!;
  const bob = () => facts.users.find((u) => !u.emailConfirmed)!;
  const mailTo = async (address: string) => (await readOutbox(service.outboxDir)).filter((m) => m.to === address);
  const html = (result: Result) => result.body ?? '';

  /** What else each sample's answer must show, beyond its status. */
  const CHECKS: Partial<Record<FunctionName, (result: Result) => void | Promise<void>>> = {
    'get-user': (r) => expect(JSON.parse(r.body!)).toMatchObject({ id: alice().id, email: alice().email }),
    'list-devices': (r) => expect(JSON.parse(r.body!)).toHaveLength(alice().devices.length),
    'get-device': (r) => expect(JSON.parse(r.body!)[0].id).toBe(alice().devices[0]),
    'get-avatar': (r) => {
      expect(r.headers['content-type']).toBe('image/png');
      expect(r.isBase64Encoded).toBe(true);
      expect(Buffer.from(r.body!, 'base64').subarray(0, 8)).toEqual(Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'));
    },
    'get-authorize': (r) => expect(html(r)).toContain('name="decision"'),
    'post-authorize': (r) => {
      const location = new URL(r.headers.location!);
      expect(`${location.origin}${location.pathname}`).toBe(facts.demoClient.redirectUri);
      expect(location.searchParams.get('error')).toBe('access_denied');
      expect(location.searchParams.get('state')).toBe('sample-state');
    },
    'post-token': (r) => expect(JSON.parse(r.body!).error).toBe('invalid_grant'),
    'post-revoke': (r) => expect(JSON.parse(r.body!)).toEqual({}),
    'get-login': (r) => expect(html(r)).toContain('name="password"'),
    'post-login': (r) => {
      expect(r.headers.location).toBe('/account');
      expect(r.cookies?.some((c) => c.startsWith('session=') && !c.startsWith('session=;'))).toBe(true);
    },
    'post-logout': (r) => expect(r.headers.location).toBe('/login'),
    'get-home': (r) => expect(r.headers.location).toBe('/account'),
    'get-api-reference': (r) => expect(html(r)).toContain('<redoc spec-url="openapi.json"'),
    'get-api-reference-script': (r) => expect(r.headers['cache-control']).toContain('immutable'),
    'post-signup': async () => expect(await mailTo('sample.signup@example.com')).toHaveLength(1),
    'get-confirm-email': (r) => expect(html(r)).toContain('action="/confirm-email"'),
    'post-confirm-email': (r) => expect(r.headers.location).toBe('/confirm-email?done=confirmed'),
    'post-resend-confirmation': async () => expect((await mailTo(bob().email)).map((m) => m.subject)).toEqual(['Confirm your e-mail address']),
    'post-password-reset': async () => expect((await mailTo(alice().email)).map((m) => m.subject)).toEqual(['Reset your password']),
    'get-new-password': (r) => expect(html(r)).toContain('Set new password'),
    'post-new-password': (r) => expect(html(r)).toContain('This reset link is invalid, expired or already used.'),
    'get-account': (r) => expect(html(r)).toContain(alice().email),
    'post-revoke-app': (r) => expect(r.headers.location).toBe('/account'),
    'get-outbox': (r) => expect(html(r)).toContain('Reset your password'),
    'get-developer': (r) => {
      expect(html(r)).toContain(facts.demoClient.clientId);
      expect(html(r)).toContain(`<a href="${facts.apiUrl}/docs">API reference</a>`);
    },
    'post-register-app': (r) => {
      expect(r.headers.location).toMatch(/^\/developer\/apps\/[0-9a-f-]{36}\/secret$/);
      expect(html(r)).not.toContain('client-secret');
    },
    'get-app': (r) => expect(html(r)).toContain(facts.demoClient.clientId),
    'post-update-app': (r) => expect(r.headers.location).toBe(`/developer/apps/${facts.demoClient.clientId}`),
    'post-rotate-secret': (r) => expect(r.headers.location).toMatch(/^\/developer\/apps\/sample-[0-9a-f-]{36}\/secret$/),
    'get-app-secret': (r) => expect(html(r)).toMatch(/id="client-secret">[A-Za-z0-9_-]{43}</),
    'post-retire-secret': (r) => expect(r.headers.location).toMatch(/^\/developer\/apps\/sample-[0-9a-f-]{36}$/),
    'get-delete-app': (r) => expect(html(r)).toContain('Scratch application (npm run invoke), to confirm'),
    'post-delete-app': (r) => expect(r.headers.location).toBe('/developer'),
    'post-webhook': (r) => expect(r.headers.location).toMatch(/^\/developer\/apps\/sample-[0-9a-f-]{36}\/secret$/),
    'post-rotate-webhook-secret': (r) => expect(r.headers.location).toMatch(/^\/developer\/apps\/sample-[0-9a-f-]{36}\/secret$/),
    'post-delete-webhook': (r) => expect(r.headers.location).toMatch(/^\/developer\/apps\/sample-[0-9a-f-]{36}\?done=webhook-removed#webhook$/),
    'post-send-test-event': (r) => expect(r.headers.location).toMatch(/\?done=webhook-test-sent#webhook$/),
    'post-redeliver-event': (r) => expect(r.headers.location).toMatch(/\?done=webhook-resent#webhook$/),
    'get-jwks': (r) => expect(JSON.parse(r.body!).keys[0].kty).toBe('RSA'),
    'rotate-signing-key': (r) => expect(JSON.parse(r.body!)).toMatchObject({ mode: 'report', introduced: null, deleted: [], keys: [{ phase: 'active' }] }),
    'http-fallback': (r) => expect(r.headers.allow).toBe('GET'),
    'fan-out-events': (r) => expect(JSON.parse(r.body!)).toEqual({ queued: 0 }),
    'deliver-webhooks': (r) => expect(JSON.parse(r.body!)).toEqual({ batchItemFailures: [] }),
  };

  beforeAll(async () => {
    facts = serviceFacts(service);
    cwd = mkdtempSync(join(tmpdir(), 'dus-invoke-'));
  });

  afterAll(() => {
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  describe('each function answers its sample event', () => {
    // In ORDER: the mail checks rely on the mail senders running before get-outbox.
    it.each(ORDER)('%s', async (fn) => {
      const { result, sample } = await invokeFunction(facts, fn);
      expect(sample).toBeTruthy();
      expect(result.statusCode, result.body).toBe(endpointOf(fn).sample.status);
      await CHECKS[fn]?.(result as Result);
    });
  });

  it('leaves behind no session, link or scratch application of its own', async () => {
    const doc = createDocumentClient({ endpoint: facts.dynamodbEndpoint });
    try {
      const sessions = createSessionRepo({ doc, table: facts.tableName });
      // The one session left is post-login's, which is what signing in does.
      expect(await sessions.sessionKeysOf(alice().id)).toHaveLength(1);
      expect(await sessions.sessionKeysOf(bob().id)).toHaveLength(0);
      const apps = await createClientRepo({ doc, table: facts.tableName }).listClientsByDeveloper(alice().id);
      expect(apps.map((a) => a.name).sort()).toEqual(['Home Dashboard (demo)', 'Sample application']);
    } finally {
      doc.destroy();
    }
  });

  describe('the command', () => {
    const run = (...args: string[]) => new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      const tsx = resolve('node_modules/tsx/dist/cli.mjs');
      const env = { ...process.env, POWERTOOLS_LOG_LEVEL: 'INFO' };
      execFile(process.execPath, [tsx, resolve('local/invoke.ts'), ...args], { cwd, env, timeout: 60_000 }, (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }));
    });

    it('prints its usage for --help and exits 0', async () => {
      const { code, stdout } = await run('--help');
      expect(code).toBe(0);
      expect(stdout).toMatch(/^Usage: npm run invoke -- <function> \[event\.json\]/);
      for (const name of Object.keys(FUNCTIONS)) expect(stdout).toContain(name);
    }, 60_000);

    it('refuses an unknown function in one line, with exit code 2', async () => {
      for (const name of ['no-such-function', 'toString']) {
        const { code, stdout, stderr } = await run(name);
        expect(code).toBe(2);
        expect(stdout).toBe('');
        expect(stderr.trim().split('\n')).toEqual([`Unknown function '${name}' (npm run invoke -- --help lists them).`]);
      }
    }, 60_000);

    it('runs a mail sender against the service named by .local/service.json, logs to stderr, and exits', async () => {
      mkdirSync(join(cwd, '.local'));
      writeFileSync(join(cwd, '.local', 'service.json'), JSON.stringify(facts));
      const before = (await mailTo(alice().email)).length;
      const { code, stdout, stderr } = await run('post-password-reset');
      expect(code, stderr).toBe(0);
      expect(JSON.parse(stdout).statusCode).toBe(303);
      expect(stderr).toContain('Sample event: POST /password-reset');
      expect(stderr).toContain('"route":"POST /password-reset","status":303');
      expect(await mailTo(alice().email)).toHaveLength(before + 1);
    }, 60_000);
  });
});

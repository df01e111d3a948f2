import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createUserRepo } from '#shared/data/user-repo';
import type { User } from '#shared/domain/user';
import { serviceFacts, type LocalService } from '#local/service';
import { runTool } from '../support/run-tool';
import { startTestService } from '../support/service';

const TOOLS = { token: 'local/token.ts', admin: 'local/admin.ts', invoke: 'local/invoke.ts', bench: 'bench/run.ts' } as const;

describe('command-line tools', () => {
  // A state folder with no service.json: a tool that read the service's facts for --help would fail.
  let stateDir: string;
  beforeAll(() => {
    stateDir = mkdtempSync(join(tmpdir(), 'dus-cli-'));
  });
  afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

  describe.each(Object.entries(TOOLS))('npm run %s', (name, script) => {
    it('prints its usage for --help and exits 0', async () => {
      const { code, stdout, stderr } = await runTool(script, ['--help'], { STATE_DIR: stateDir });

      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).toMatch(/^Usage:/);
      expect(stdout).toContain(`npm run ${name}`);
    }, 60_000);

    it('refuses an unknown flag in one line, with exit status 2', async () => {
      const { code, stdout, stderr } = await runTool(script, ['--no-such-flag'], { STATE_DIR: stateDir });

      expect(stderr.trim().split('\n')).toEqual([`Unknown option '--no-such-flag' (npm run ${name} -- --help shows the usage).`]);
      expect(code).toBe(2);
      expect(stdout).toBe('');
    }, 60_000);
  });
});

describe('npm run token', () => {
  let service: LocalService;
  let stateDir: string;
  const carol: User = {
    id: randomUUID(), firstname: 'Carol', lastname: 'Nguyen', avatar_url: '', gender: 0, email: `carol-${randomUUID()}@example.org`,
    email_confirmed: true, creation_date: '2026-01-02T03:04:05.678', update_date: '2026-01-02T03:04:05.678',
  };

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'dus-token-'));
    service = await startTestService({ stateDir });
    const doc = createDocumentClient({ endpoint: service.dynamodbEndpoint });
    try {
      await createUserRepo({ doc, table: service.tableName }).createUser(carol, 'scrypt$32768$8$1$c2FsdA$aGFzaA');
    } finally {
      doc.destroy();
    }
    // What `npm start` writes, in the test's own state folder (STATE_DIR), never in `.local/`.
    writeFileSync(join(stateDir, 'service.json'), JSON.stringify(serviceFacts(service)));
  });
  afterAll(async () => {
    await service?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('signs a token for an account that is not a demo account, which the API accepts', async () => {
    const { code, stdout, stderr } = await runTool(TOOLS.token, ['--user', carol.email.toUpperCase(), '--scope', 'read_user'], { STATE_DIR: stateDir });
    expect(stderr).toBe('');
    expect(code).toBe(0);

    const response = await fetch(`${service.apiUrl}/user`, { headers: { authorization: `Bearer ${stdout.trim()}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: carol.id, email: carol.email });
  }, 60_000);

  it('refuses an e-mail address with no account in one line, with exit status 2', async () => {
    const email = `nobody-${randomUUID()}@example.org`;
    const { code, stdout, stderr } = await runTool(TOOLS.token, ['--user', email], { STATE_DIR: stateDir });

    expect(stderr.trim().split('\n')).toEqual([`No account for ${email} on the local service (sign up at ${service.authUrl}/signup, or use a demo account).`]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
  }, 60_000);
});

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '#shared/domain/user';
import { serviceFacts } from '#local/service';
import { createBatchReader } from '#shared/data/batch-read';
import { createFactorRepo } from '#shared/data/factor-repo';
import { readOutbox } from '#shared/email/outbox-mailer';
import { runTool } from '../support/run-tool';
import { useTable, useTestService } from '../support/service';

const TOOLS = { token: 'local/token.ts', admin: 'local/admin.ts', invoke: 'local/invoke.ts', bench: 'bench/run.ts', device: 'local/device.ts' } as const;

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
  const service = useTestService();
  const { users } = useTable(service).repos;
  /** The service's own state folder (its signing key, its outbox), which is also the tools' STATE_DIR. */
  let stateDir: string;
  const carol: User = {
    id: randomUUID(), firstname: 'Carol', lastname: 'Nguyen', avatar_url: '', gender: 0, email: `carol-${randomUUID()}@example.org`,
    email_confirmed: true, creation_date: '2026-01-02T03:04:05.678', update_date: '2026-01-02T03:04:05.678',
  };

  beforeAll(async () => {
    stateDir = dirname(service.signingKeyFile);
    await users.createUser(carol, 'scrypt$32768$8$1$c2FsdA$aGFzaA');
    // What `npm start` writes, in the test's own state folder (STATE_DIR), never in `.local/`.
    writeFileSync(join(stateDir, 'service.json'), JSON.stringify(serviceFacts(service)));
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

describe('npm run admin -- reset-factors', () => {
  const service = useTestService();
  const { repos, doc } = useTable(service);
  let stateDir: string;
  /** The tool's environment: this service's state folder, and no TABLE_NAME (this process has the service's, which would mean AWS to the tool). */
  let local: Record<string, string>;

  beforeAll(() => {
    stateDir = dirname(service.signingKeyFile);
    local = { STATE_DIR: stateDir, TABLE_NAME: '' };
    writeFileSync(join(stateDir, 'service.json'), JSON.stringify(serviceFacts(service)));
  });

  /** A confirmed account with an authenticator app and recovery codes, signed in on one browser. */
  async function accountWithFactors() {
    const user: User = {
      id: randomUUID(), firstname: 'Dana', lastname: 'Okafor', avatar_url: '', gender: 0, email: `dana-${randomUUID()}@example.org`,
      email_confirmed: true, creation_date: '2026-01-02T03:04:05.678', update_date: '2026-01-02T03:04:05.678',
    };
    await repos.users.createUser(user, 'scrypt$32768$8$1$c2FsdA$aGFzaA');
    const factors = createFactorRepo({ doc, table: service.tableName });
    const now = new Date();
    await factors.startTotpEnrolment(user.id, 'JBSWY3DPEHPK3PXP', now);
    expect(await factors.enrolTotp({ userId: user.id, secret: 'JBSWY3DPEHPK3PXP', step: 1, recoveryCodeHashes: ['a', 'b'], sealedCodes: 'x', now })).toBe(true);
    await repos.sessions.createSession(user.id);
    return user;
  }

  it('refuses to act without --confirm, changing nothing', async () => {
    const user = await accountWithFactors();
    const { code, stdout, stderr } = await runTool(TOOLS.admin, ['reset-factors', '--email', user.email], local);

    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim()).toBe(`This removes every second factor of ${user.email} and signs it out everywhere: check who asks first, then run it again with --confirm.`);
    expect((await repos.users.getUserRecord(user.id))?.totpEnabled).toBe(true);
  }, 60_000);

  it('removes every factor, signs the account out everywhere and e-mails its owner', async () => {
    const user = await accountWithFactors();
    const { code, stdout, stderr } = await runTool(TOOLS.admin, ['reset-factors', '--email', user.email.toUpperCase(), '--confirm'], local);

    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ factorsReset: user.email.toUpperCase(), passkeysRemoved: 0, sessionsEnded: 1, mailed: true });
    expect((await repos.users.getUserRecord(user.id))?.totpEnabled).toBe(false);
    const [stored] = await createBatchReader({ doc, table: service.tableName }).read([createFactorRepo({ doc, table: service.tableName }).factorsRead(user.id)] as const);
    expect(stored).toEqual({ totp: undefined, recoveryCodeHashes: [] });
    expect(await repos.sessions.sessionKeysOf(user.id)).toEqual([]);
    const mail = (await readOutbox(service.outboxDir)).filter((m) => m.to === user.email);
    expect(mail.map((m) => m.subject)).toEqual(['Two-step sign-in was turned off']);
    expect(mail[0]!.text).toContain(`${service.authUrl}/password-reset`);
  }, 60_000);

  it('says in one line when the address has no account', async () => {
    const email = `nobody-${randomUUID()}@example.org`;
    const { code, stderr } = await runTool(TOOLS.admin, ['reset-factors', '--email', email, '--confirm'], local);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe(`No account for ${email}.`);
  }, 60_000);
});

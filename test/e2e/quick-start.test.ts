import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_USERS } from '#local/seed';
import type { ServiceFacts } from '#local/service';
import { runTool } from '../support/run-tool';

// The README's quick start as a newcomer runs it: `npm start` (free ports, a state folder of its own)
// brings up the service with a demo device already connected to the IoT Core stand-in, as its
// firmware would connect; a token from `npm run token` shows it connected in GET /devices, a PUT of
// `sound` reaches the device through its shadow (it says so, and reports it back), and Ctrl-C stops
// everything with exit status 0.
const [ALICE] = DEMO_USERS;
const DEVICE = ALICE.devices[0];

describe('npm start', () => {
  it('runs the service with a demo device that is connected and obeys a PUT, and stops on Ctrl-C', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'dus-quick-start-'));
    const started = Date.now();
    // One process (tsx as a loader), so that the Ctrl-C reaches the service itself.
    const child = spawn(process.execPath, ['--import', 'tsx', resolve('local/start.ts')], {
      env: { ...process.env, STATE_DIR: stateDir, API_PORT: '0', AUTH_PORT: '0', EXAMPLE_PORT: '0', TABLE_NAME: '' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit');
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    const until = async (text: string, ms: number) => {
      const deadline = Date.now() + ms;
      while (!output.includes(text)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start never said "${text}": ${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      await until('Press Ctrl-C to stop.', 90_000);
      expect(output).toContain(`demo device ${DEVICE.id}`);
      const facts = JSON.parse(readFileSync(join(stateDir, 'service.json'), 'utf8')) as ServiceFacts;
      expect(facts.iot?.connectedDevice).toBe(DEVICE.id);

      const token = await runTool('local/token.ts', ['--user', ALICE.user.email, '--scope', 'read_device write_device'], { STATE_DIR: stateDir, TABLE_NAME: '' });
      expect(token.code, token.stderr).toBe(0);
      const auth = { authorization: `Bearer ${token.stdout.trim()}` };
      const device = async () => ((await (await fetch(`${facts.apiUrl}/devices/${DEVICE.id}`, { headers: auth })).json()) as { connected: boolean; sound: boolean; last_connection: string }[])[0]!;
      // Connected by this run (the seed says connected too, from a fixed date): its last connection is this run's.
      expect(await device()).toMatchObject({ connected: true });
      expect(Date.parse(`${(await device()).last_connection}Z`)).toBeGreaterThanOrEqual(started - 1000);

      const put = await fetch(`${facts.apiUrl}/devices/${DEVICE.id}`, {
        method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ sound: !DEVICE.sound }),
      });
      expect(put.status).toBe(204);
      await until(`Device ${DEVICE.id} obeys: sound → ${!DEVICE.sound}`, 30_000);
      expect(await device()).toMatchObject({ connected: true, sound: !DEVICE.sound });

      child.kill('SIGINT');
      const [code] = await exited;
      expect(code, output).toBe(0);
    } finally {
      // A failed run stops the service as Ctrl-C does, so that it stops DynamoDB Local too; SIGKILL only if it hangs.
      if (child.exitCode === null) {
        child.kill('SIGINT');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
        child.kill('SIGKILL');
      }
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 180_000);
});

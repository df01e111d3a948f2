import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LifecycleMessage } from '#local/iot-broker';
import { DEMO_USERS } from '#local/seed';
import { serviceFacts } from '#local/service';
import { tokenFor, useTestService } from '../support/service';

// `npm run device` against a local service with its IoT Core stand-in (as `npm start` runs it): the
// demo device connects with the certificate the service wrote for it, shows connected in
// GET /devices, and disconnected once the simulator is stopped with Ctrl-C; it obeys its shadow's
// deltas, and a press of its button (a line on its input) reaches the API.
const [ALICE] = DEMO_USERS;
const DEVICE = ALICE.devices[0].id;

describe('npm run device', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dus-device-'));
  const service = useTestService({ iot: true, stateDir });
  afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

  const recorded = (type: string) => new Promise<[LifecycleMessage, unknown]>((done) => {
    const listener = (event: LifecycleMessage, result: unknown) => {
      if (event.clientId !== DEVICE || event.eventType !== type) return;
      service.iot!.broker.events.off('recorded', listener);
      done([event, result]);
    };
    service.iot!.broker.events.on('recorded', listener);
  });
  async function listed() {
    const token = await tokenFor(service, ALICE.user.id, ['read_device']);
    const res = await fetch(`${service.apiUrl}/devices`, { headers: { authorization: `Bearer ${token}` } });
    return ((await res.json()) as { id: string; connected: boolean }[]).find((d) => d.id === DEVICE);
  }

  it('connects the first demo device with its certificate until Ctrl-C', async () => {
    writeFileSync(join(stateDir, 'service.json'), JSON.stringify(serviceFacts(service)));
    const connected = recorded('connected');
    // One process (tsx as a loader, not its CLI's parent process), so that the Ctrl-C reaches the simulator itself.
    const child = spawn(process.execPath, ['--import', 'tsx', resolve('local/device.ts')], {
      env: { ...process.env, STATE_DIR: stateDir }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit');
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    try {
      expect((await connected)[1]).toEqual({ outcome: 'applied' });
      expect(await listed()).toMatchObject({ connected: true });
      const gone = recorded('disconnected');
      // Ctrl-C once the simulator says it is connected (its handler is set by then).
      while (!output.includes('connected to')) await once(child.stdout, 'data');
      child.kill('SIGINT');
      expect((await gone)[0]).toMatchObject({ disconnectReason: 'CLIENT_INITIATED_DISCONNECT' });
      const [code] = await exited;
      expect(code, `exit code ${code}: ${output}`).toBe(0);
      expect(output).toContain(`Device ${DEVICE} disconnected.`);
      expect(await listed()).toMatchObject({ connected: false });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('obeys an owner\'s PUT from its shadow\'s delta, and its button press reaches GET /devices', async () => {
    writeFileSync(join(stateDir, 'service.json'), JSON.stringify(serviceFacts(service)));
    const child = spawn(process.execPath, ['--import', 'tsx', resolve('local/device.ts')], {
      env: { ...process.env, STATE_DIR: stateDir }, stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    const until = async (text: string) => {
      const deadline = Date.now() + 20_000;
      while (!output.includes(text)) {
        if (Date.now() > deadline) throw new Error(`the simulator never said "${text}": ${output}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    try {
      await until('connected to');
      await service.iot!.settled();
      const token = await tokenFor(service, ALICE.user.id, ['read_device', 'write_device']);
      const res = await fetch(`${service.apiUrl}/devices/${DEVICE}`, {
        method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"sound":false}',
      });
      expect(res.status).toBe(204);
      await until('obeys: sound → false');
      child.stdin.write('s\n');
      await until('button pressed, sound → true');
      const deadline = Date.now() + 20_000;
      while ((await listed() as { sound?: boolean } | undefined)?.sound !== true && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await listed()).toMatchObject({ sound: true });
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }
    }
  });
});

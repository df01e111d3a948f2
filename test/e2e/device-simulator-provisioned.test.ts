import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceFacts } from '#local/service';
import { Browser, createAccount, formFields, signIn } from '../support/oauth-client';
import { lifecycleRecorded, listedDevice } from '../support/iot-devices';
import { runTool } from '../support/run-tool';
import { useTestService } from '../support/service';

// `npm run device -- <device id>` with a device the operator provisioned (`npm run admin --
// provision-device`, which writes its certificate and key to the service's iot folder): the
// simulator connects it with those files, unclaimed (the device policy lets it connect; presence
// records nothing, nobody owns it) and claimed (shown connected in its owner's GET /devices, then
// disconnected after Ctrl-C, exit 0). Removed from its account, its certificate is deactivated: the
// broker refuses it at CONNECT, and the simulator says so and exits 1 instead of waiting. A device
// with no files there is refused with exit status 2.

interface Provisioned { provisioned: string; claimCode: string; certificateId: string }

describe('npm run device with a provisioned device', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dus-device-provisioned-'));
  const service = useTestService({ iot: true, stateDir });
  const children: ReturnType<typeof spawn>[] = [];
  // The tools' environment: this service's state folder, and no TABLE_NAME (this process has the service's, which would mean AWS to the admin tool).
  const env = { STATE_DIR: stateDir, TABLE_NAME: '' };
  beforeAll(() => writeFileSync(join(stateDir, 'service.json'), JSON.stringify(serviceFacts(service))));
  afterAll(async () => {
    for (const child of children.filter((c) => c.exitCode === null && c.signalCode === null)) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(stateDir, { recursive: true, force: true });
  });

  /** The simulator for `id`, as `npm run device -- <id>` runs it (one process, so that a Ctrl-C reaches it), with what it printed so far. */
  function simulator(id: string) {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve('local/device.ts'), id], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    const exited = once(child, 'exit') as Promise<[number | null]>;
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    return {
      child, exited, output: () => output,
      async until(text: string) {
        const deadline = Date.now() + 20_000;
        while (!output.includes(text)) {
          if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the simulator never said "${text}": ${output}`);
          await new Promise((r) => setTimeout(r, 25));
        }
      },
    };
  }
  /** Runs the simulator for `id` until it says it is connected, then Ctrl-C: it disconnects cleanly and exits 0. */
  async function connectAndStop(id: string, whileConnected: () => Promise<void>) {
    const sim = simulator(id);
    await sim.until(`Device ${id} connected to`);
    await whileConnected();
    const gone = lifecycleRecorded(service.iot!.broker, id, 'disconnected');
    sim.child.kill('SIGINT');
    expect((await gone)[0]).toMatchObject({ disconnectReason: 'CLIENT_INITIATED_DISCONNECT' });
    const [code] = await sim.exited;
    expect(code, sim.output()).toBe(0);
    expect(sim.output()).toContain(`Device ${id} disconnected.`);
  }

  it('connects a provisioned device, unclaimed and claimed, until Ctrl-C; removed from its account, it is refused and the simulator exits 1', async () => {
    const made = await runTool('local/admin.ts', ['provision-device', '--name', 'Porch light', '--place', 'Lyon house', '--reference', '1b2c3d4e'], env);
    expect(made.code, made.stderr).toBe(0);
    const device = JSON.parse(made.stdout) as Provisioned;
    const id = device.provisioned;

    // Unclaimed: the broker lets it connect as its thing; the presence rule finds no owner and writes nothing.
    let connected = lifecycleRecorded(service.iot!.broker, id, 'connected');
    await connectAndStop(id, async () => {
      expect((await connected)[1]).toEqual({ outcome: 'unknown-device' });
    });

    // Claimed on its owner's devices page: its presence shows in the owner's GET /devices.
    const owner = await createAccount(service);
    const browser = new Browser(service.authUrl);
    expect((await signIn(browser, owner, '/account/devices')).status).toBe(303);
    let page = await browser.get('/account/devices');
    const claimed = await browser.postForm('/account/devices/claim', { ...formFields(page.text, '/account/devices/claim'), claim_code: device.claimCode });
    expect(claimed.status).toBe(303);
    connected = lifecycleRecorded(service.iot!.broker, id, 'connected');
    await connectAndStop(id, async () => {
      expect((await connected)[1]).toEqual({ outcome: 'applied' });
      expect(await listedDevice(service, owner.user.id, id)).toMatchObject({ connected: true });
    });
    expect(await listedDevice(service, owner.user.id, id)).toMatchObject({ connected: false });

    // Removed from the account: its certificate is deactivated, the broker refuses it at CONNECT.
    page = await browser.get('/account/devices');
    const removed = await browser.postForm(`/account/devices/${id}/remove`, formFields(page.text, `/account/devices/${id}/remove`));
    expect(removed.status).toBe(303);
    const refused = simulator(id);
    const [code] = await refused.exited;
    expect(code, refused.output()).toBe(1);
    expect(refused.output()).toContain(`Device ${id} was refused by the broker (not authorized)`);
  }, 60_000);

  it('refuses a device with no certificate and key in the service\'s iot folder, and what is not a device id, with exit status 2', async () => {
    const unknown = randomUUID();
    const run = await runTool('local/device.ts', [unknown], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${unknown} is neither a demo device of the running service nor a device provisioned to it`);
    // The factory's claim certificate is in that folder too: it is no device's.
    const claim = await runTool('local/device.ts', ['claim'], env);
    expect(claim.code).toBe(2);
    expect(claim.stderr).toContain('claim is not a device id');
  });
});

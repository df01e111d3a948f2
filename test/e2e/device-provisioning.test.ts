import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ScanCommand } from '#shared/data/commands';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceFacts } from '#local/service';
import { normalizeClaimCode } from '#shared/domain/claim-code';
import { hashSecret } from '#shared/secrets';
import { Browser, createAccount, formFields, signIn, type Account } from '../support/oauth-client';
import { runTool } from '../support/run-tool';
import { useTable, useTestService } from '../support/service';

// Device identity, provisioned one at a time by the operator: `npm run admin -- provision-device`
// gives a device that belongs to nobody its IoT thing, certificate and key files (the local registry
// stand-in, through the real IoT SDK client, with certificates of the local CA) and its claim code.
// The device connects with them (mqtt.js); its owner claims it; removing it deactivates the
// certificate (the remove function's UpdateCertificate), and the broker refuses the device at
// CONNECT; a reset gives it a new certificate and code for its next owner.

interface Provisioned { provisioned: string; claimCode: string; certificateId: string; certificate: string; key: string; reset: boolean }

describe('provisioning devices with their IoT identity', () => {
  const service = useTestService({ iot: true });
  const { doc } = useTable(service, { requestTimeoutMs: 10_000 });
  let local: Record<string, string>;
  const clients: MqttClient[] = [];

  beforeAll(() => {
    // The tool's environment: this service's state folder, and no TABLE_NAME (this process has the service's, which would mean AWS to the tool).
    local = { STATE_DIR: dirname(service.signingKeyFile), TABLE_NAME: '' };
    writeFileSync(join(local.STATE_DIR!, 'service.json'), JSON.stringify(serviceFacts(service)));
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true)));
  });

  const admin = (...args: string[]) => runTool('local/admin.ts', ['provision-device', ...args], local);
  async function provision(...args: string[]): Promise<Provisioned> {
    const { code, stdout, stderr } = await admin(...args);
    expect(code, stderr).toBe(0);
    return JSON.parse(stdout) as Provisioned;
  }
  async function scanAll(): Promise<string[]> {
    const { Items = [] } = await doc.send(new ScanCommand({ TableName: service.tableName, ConsistentRead: true }));
    return Items.map((item) => JSON.stringify(Object.entries(item).sort())).sort();
  }

  /** Connects as `clientId` with the device's files: resolves on CONNACK 0, rejects with the refusal. */
  function connect(device: Provisioned, clientId = device.provisioned): Promise<MqttClient> {
    const c = mqtt.connect(service.iot!.broker.url, {
      clientId, cert: readFileSync(device.certificate), key: readFileSync(device.key), ca: readFileSync(join(service.iot!.credentialsDir, 'ca.pem')),
      reconnectPeriod: 0, protocolVersion: 4, connectTimeout: 10_000,
    });
    clients.push(c);
    return new Promise((resolve, reject) => {
      c.once('connect', () => resolve(c));
      c.once('error', reject);
    });
  }

  /** `account` claims the device with `code` on the devices page; the page's answer. */
  async function claim(account: Account, code: string) {
    const b = new Browser(service.authUrl);
    expect((await signIn(b, account, '/account/devices')).status).toBe(303);
    const page = await b.get('/account/devices');
    return { b, reply: await b.postForm('/account/devices/claim', { ...formFields(page.text, '/account/devices/claim'), claim_code: code }) };
  }

  it('provisions, connects, is claimed; removed, its certificate is refused at CONNECT; reset, it serves its next owner', async () => {
    const callsBefore = service.iot!.registry.calls().length;
    const device = await provision('--name', 'Porch light', '--place', 'Lyon house', '--reference', '1b2c3d4e');

    // Its identity: a certificate of the local CA whose id is IoT Core's (SHA-256 of the DER), the key readable by its owner only.
    const certificate = new X509Certificate(readFileSync(device.certificate));
    expect(createHash('sha256').update(certificate.raw).digest('hex')).toBe(device.certificateId);
    expect(certificate.verify(new X509Certificate(readFileSync(join(service.iot!.credentialsDir, 'ca.pem'))).publicKey)).toBe(true);
    expect(statSync(device.key).mode & 0o777).toBe(0o600);
    expect(device.claimCode).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}(-[BCDFGHJKLMNPQRSTVWXZ]{4}){3}$/);
    const arn = `arn:aws:iot:us-east-1:000000000000:cert/${device.certificateId}`;
    expect(service.iot!.registry.calls().slice(callsBefore)).toEqual([
      { operation: 'CreateThing', target: device.provisioned },
      { operation: 'CreateKeysAndCertificate', target: device.certificateId },
      { operation: 'AttachPolicy', target: arn, detail: 'local-device-policy' },
      { operation: 'AttachThingPrincipal', target: device.provisioned, detail: arn },
    ]);
    // Stored as belonging to nobody, with the code's hash only.
    const stored = (await scanAll()).filter((item) => item.includes(device.provisioned));
    expect(stored.some((item) => item.includes(hashSecret(normalizeClaimCode(device.claimCode)!)))).toBe(true);
    expect(stored.join('\n')).not.toContain(device.claimCode);

    // The device connects as its thing, and only as its thing.
    (await connect(device)).end(true);
    await expect(connect(device, 'someone-else')).rejects.toMatchObject({ code: 5 });

    const owner = await createAccount(service);
    const { b, reply } = await claim(owner, device.claimCode);
    expect(reply.status).toBe(303);
    (await connect(device)).end(true);

    // Removed from the account: the remove function deactivates the certificate, and the broker refuses it.
    const page = await b.get('/account/devices');
    const removed = await b.postForm(`/account/devices/${device.provisioned}/remove`, formFields(page.text, `/account/devices/${device.provisioned}/remove`));
    expect(removed.status).toBe(303);
    expect(service.iot!.registry.calls()).toContainEqual({ operation: 'UpdateCertificate', target: device.certificateId, detail: 'INACTIVE' });
    await expect(connect(device)).rejects.toMatchObject({ code: 5 });

    // Reset for its next owner: a new certificate and code; the old certificate stays refused.
    const reset = await provision('--id', device.provisioned);
    expect(reset).toMatchObject({ provisioned: device.provisioned, reset: true });
    expect(reset.certificateId).not.toBe(device.certificateId);
    expect(reset.claimCode).not.toBe(device.claimCode);
    (await connect(reset)).end(true);
    const next = await createAccount(service);
    expect((await claim(next, device.claimCode)).reply.status).toBe(400);
    expect((await claim(next, reset.claimCode)).reply.status).toBe(303);
  });

  it.each([
    ['a new device without its name', ['--place', 'Hall', '--reference', 'ab12'], 'needs --name'],
    ['a reference that is not hexadecimal', ['--name', 'Hall', '--place', 'Hall', '--reference', 'xyz'], 'hexadecimal --reference'],
    ['a name with a control character', ['--name', 'Hall\u0007', '--place', 'Hall', '--reference', 'ab12'], 'name'],
    ['an id that is not a UUID', ['--id', 'not-a-device', '--name', 'Hall', '--place', 'Hall', '--reference', 'ab12'], 'not a device id'],
  ])('refuses %s: a clear message, exit 2, nothing written and no identity made', async (_label, args, message) => {
    const before = await scanAll();
    const calls = service.iot!.registry.calls().length;

    const { code, stderr } = await admin(...args);

    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(await scanAll()).toEqual(before);
    expect(service.iot!.registry.calls()).toHaveLength(calls);
  });

  it('refuses to provision a device an account owns: its owner removes it first', async () => {
    const device = await provision('--name', 'Cellar', '--place', 'Lyon house', '--reference', 'ab12');
    expect((await claim(await createAccount(service), device.claimCode)).reply.status).toBe(303);
    const before = await scanAll();

    const { code, stderr } = await admin('--id', device.provisioned);

    expect(code).toBe(2);
    expect(stderr).toContain('belongs to an account');
    expect(await scanAll()).toEqual(before);
  });
});

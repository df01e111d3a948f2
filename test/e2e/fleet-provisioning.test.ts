import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GetCommand, ScanCommand } from '#shared/data/commands';
import { beforeAll, describe, expect, it } from 'vitest';
import { runProvisioningHook } from '#local/iot-rules';
import { serviceFacts } from '#local/service';
import { deviceKey, factorySerialKey, unclaimedDeviceKey } from '#shared/data/item-keys';
import { Browser, createAccount, formFields, signIn } from '../support/oauth-client';
import { runTool } from '../support/run-tool';
import { useTable, useTestService } from '../support/service';

// Devices provisioned in bulk at the factory, by claim: the operator puts a batch of serial numbers on
// the allow-list (`npm run admin -- allow-serials`: a device that belongs to nobody per serial, its
// claim code on the label sheet); IoT Core's pre-provisioning hook, run here as fleet provisioning
// runs it, lets a listed serial register once, named as its device, its certificate recorded; the
// owner then claims the device with the label's code. Refusals write nothing.

const certificateId = () => randomBytes(32).toString('hex');
/** A RegisterThing request as IoT Core hands it to the hook (payload version 2020-04-01). */
const request = (serial: unknown, certificate = certificateId()) => ({
  claimCertificateId: 'c'.repeat(64), certificateId: certificate, certificatePem: '-----BEGIN CERTIFICATE-----\n…', clientId: 'factory-line-3',
  templateArn: 'arn:aws:iot:us-east-1:000000000000:provisioningtemplate/devices', parameters: { SerialNumber: serial },
});

describe('fleet provisioning by claim', () => {
  const service = useTestService();
  const { doc } = useTable(service, { requestTimeoutMs: 10_000 });
  let local: Record<string, string>;

  beforeAll(() => {
    local = { STATE_DIR: dirname(service.signingKeyFile), TABLE_NAME: '' };
    writeFileSync(join(local.STATE_DIR!, 'service.json'), JSON.stringify(serviceFacts(service)));
  });

  const raw = async (key: Record<string, string>) => (await doc.send(new GetCommand({ TableName: service.tableName, Key: key, ConsistentRead: true }))).Item;
  async function scanAll(): Promise<string[]> {
    const { Items = [] } = await doc.send(new ScanCommand({ TableName: service.tableName, ConsistentRead: true }));
    return Items.map((item) => JSON.stringify(Object.entries(item).sort())).sort();
  }
  /** A batch on the allow-list; its label sheet, by serial. */
  async function batch(...serials: string[]): Promise<Map<string, { deviceId: string; claimCode: string }>> {
    const out = join(local.STATE_DIR!, `batch-${randomBytes(4).toString('hex')}.csv`);
    const { code, stderr } = await runTool('local/admin.ts', ['allow-serials', '--serials', serials.join(','), '--reference', '0a1b2c', '--out', out], local);
    expect(code, stderr).toBe(0);
    const [header, ...lines] = readFileSync(out, 'utf8').trim().split('\n');
    expect(header).toBe('serial,device_id,claim_code');
    return new Map(lines.map((line) => line.split(',')).map(([serial, deviceId, claimCode]) => [serial!, { deviceId: deviceId!, claimCode: claimCode! }]));
  }

  it('lets a listed serial register once, as its device with its certificate; its owner claims it with the label\'s code', async () => {
    const sheet = await batch('SN-A-0001', 'SN-A-0002');
    const { deviceId, claimCode } = sheet.get('SN-A-0001')!;
    const certificate = certificateId();

    expect(await runProvisioningHook(request('SN-A-0001', certificate))).toEqual({ allowProvisioning: true, parameterOverrides: { ThingName: deviceId } });
    expect(await raw(unclaimedDeviceKey(deviceId))).toMatchObject({ id: deviceId, certificateId: certificate });
    expect(await raw(factorySerialKey('SN-A-0001'))).toMatchObject({ status: 'provisioned', deviceId, certificateId: certificate });

    // The same serial again (a cloned claim, a replay): refused, nothing written.
    const before = await scanAll();
    expect(await runProvisioningHook(request('SN-A-0001'))).toEqual({ allowProvisioning: false });
    expect(await scanAll()).toEqual(before);

    const owner = await createAccount(service);
    const b = new Browser(service.authUrl);
    expect((await signIn(b, owner, '/account/devices')).status).toBe(303);
    const page = await b.get('/account/devices');
    expect((await b.postForm('/account/devices/claim', { ...formFields(page.text, '/account/devices/claim'), claim_code: claimCode })).status).toBe(303);
    expect(await raw(deviceKey(owner.user.id, deviceId))).toMatchObject({ certificateId: certificate });
  });

  it('of ten concurrent registrations of one serial, one is allowed', async () => {
    const sheet = await batch('SN-B-0001');
    const answers = await Promise.all(Array.from({ length: 10 }, () => runProvisioningHook(request('SN-B-0001'))));
    expect(answers.filter((a) => a.allowProvisioning)).toHaveLength(1);
    expect(answers.find((a) => a.allowProvisioning)!.parameterOverrides).toEqual({ ThingName: sheet.get('SN-B-0001')!.deviceId });
  });

  it.each([
    ['a serial not on the allow-list', request('SN-NOT-LISTED')],
    ['no serial', request(undefined)],
    ['a serial that is not one', request('../SN-A-0002')],
    ['a serial of another type', request(42)],
    ['a malformed certificate id', { ...request('SN-A-0002'), certificateId: 'not-hex' }],
    ['no parameters', { certificateId: certificateId() }],
    ['not an object', 'SN-A-0002'],
  ])('refuses %s, writing nothing', async (_label, event) => {
    const before = await scanAll();
    expect(await runProvisioningHook(event)).toEqual({ allowProvisioning: false });
    expect(await scanAll()).toEqual(before);
  });

  it.each([
    ['a malformed serial', ['--serials', 'SN 1', '--reference', 'ab'], 'Not serial numbers'],
    ['a serial given twice', ['--serials', 'SN-C-1,SN-C-1', '--reference', 'ab'], 'given twice'],
    ['a serial listed already', ['--serials', 'SN-C-2,SN-A-0002', '--reference', 'ab'], 'On the allow-list already: SN-A-0002'],
    ['no reference', ['--serials', 'SN-C-3'], 'hexadecimal --reference'],
  ])('the operator\'s batch refuses %s: exit 2, nothing written', async (_label, args, message) => {
    // SN-A-0002 was listed by the first test's batch.
    const before = await scanAll();
    const { code, stderr } = await runTool('local/admin.ts', ['allow-serials', ...args], local);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(await scanAll()).toEqual(before);
  });
});

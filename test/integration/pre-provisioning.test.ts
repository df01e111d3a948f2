import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { serialKey } from '#shared/data/item-keys';
import { checkProvisioning, type PreProvisioningDeps } from '#shared/fleet/pre-provisioning';
import type { Logger } from '#shared/log';
import { countRequests } from '../support/count-requests';
import { useRepoTable } from '../support/repos';

// The fleet provisioning hook against DynamoDB Local: IoT Core's request as AWS documents it
// ("Pre-provisioning hooks", AWS IoT Core Developer Guide), for listed, unlisted and reused serials,
// and input that is not IoT Core's.

const certificateId = () => randomUUID().replace(/-/g, '').repeat(2);
/** IoT Core's request to the hook, with every field it sends. */
function request(serial: unknown, certificate = certificateId()) {
  return {
    claimCertificateId: 'c'.repeat(64), certificateId: certificate, certificatePem: '-----BEGIN CERTIFICATE-----\nMII…\n-----END CERTIFICATE-----\n',
    templateArn: 'arn:aws:iot:us-east-1:123456789012:provisioningtemplate/devices', clientId: 'factory-7', parameters: { SerialNumber: serial },
  };
}

describe('the pre-provisioning hook', () => {
  const { doc, table, repos } = useRepoTable();
  const lines: { level: string; message: string; attributes?: Record<string, unknown> }[] = [];
  const record = (level: string) => (message: string, attributes?: Record<string, unknown>) => void lines.push({ level, message, attributes });
  const logger: Logger = { debug: record('DEBUG'), info: record('INFO'), warn: record('WARN'), error: record('ERROR'), getLevelName: () => 'INFO' };
  const deps: PreProvisioningDeps = { serials: repos.serials, logger };
  const stored = async (serial: string) => (await doc.send(new GetCommand({ TableName: table, Key: serialKey(serial), ConsistentRead: true }))).Item;

  async function listed() {
    const serial = `SN-${randomUUID().slice(0, 13)}`;
    const deviceId = randomUUID();
    expect(await repos.serials.allowSerial(serial, deviceId, new Date())).toBe(true);
    return { serial, deviceId };
  }

  it('admits a listed serial, names the thing by its device id, and admits IoT Core\'s retry of the same certificate', async () => {
    const { serial, deviceId } = await listed();
    const input = request(serial);
    expect(await checkProvisioning(input, deps)).toEqual({ allowProvisioning: true, parameterOverrides: { ThingName: deviceId } });
    expect(await stored(serial)).toMatchObject({ deviceId, certificateId: input.certificateId });
    expect(await checkProvisioning(input, deps)).toEqual({ allowProvisioning: true, parameterOverrides: { ThingName: deviceId } });
  });

  it('refuses a second certificate for a serial, even many at once: exactly one of them is admitted', async () => {
    const { serial } = await listed();
    const answers = await Promise.all(Array.from({ length: 12 }, () => checkProvisioning(request(serial), deps)));
    expect(answers.filter((a) => a.allowProvisioning)).toHaveLength(1);
    expect(lines.filter((l) => l.attributes?.reason === 'serial-used' && l.attributes.serial === serial)).toHaveLength(11);
  });

  it('refuses a serial nobody listed, writing nothing', async () => {
    const serial = `SN-${randomUUID().slice(0, 13)}`;
    expect(await checkProvisioning(request(serial), deps)).toEqual({ allowProvisioning: false });
    expect(await stored(serial)).toBeUndefined();
    expect(lines.at(-1)).toMatchObject({ level: 'WARN', message: 'provisioning refused', attributes: { reason: 'serial-not-listed', serial } });
  });

  it('refuses what is not IoT Core\'s request without asking storage: no serial, a malformed one, a bad certificate id, a huge or non-object input', async () => {
    const { serial } = await listed();
    const counter = countRequests(doc);
    const cases: [unknown, string][] = [
      [request(undefined), 'no-serial'],
      [request(42), 'no-serial'],
      [request('x'), 'no-serial'],
      [request('SN 1; DROP'), 'no-serial'],
      [{ ...request(serial), parameters: 'SerialNumber' }, 'no-serial'],
      [request(serial, 'not-hex'), 'bad-certificate-id'],
      [{ ...request(serial), certificatePem: 'A'.repeat(20_000) }, 'too-large'],
      ['{"certificateId":"…"}', 'not-an-object'],
      [null, 'not-an-object'],
      [[request(serial)], 'not-an-object'],
    ];
    for (const [input, reason] of cases) {
      expect(await checkProvisioning(input, deps)).toEqual({ allowProvisioning: false });
      expect(lines.at(-1)).toMatchObject({ level: 'WARN', attributes: { reason } });
    }
    expect(counter.total).toBe(0);
    expect(await stored(serial)).not.toHaveProperty('certificateId');
  });

  it('an operator cannot list a serial twice: the first device id stays', async () => {
    const { serial, deviceId } = await listed();
    expect(await repos.serials.allowSerial(serial, randomUUID(), new Date())).toBe(false);
    expect(await stored(serial)).toMatchObject({ deviceId });
  });
});

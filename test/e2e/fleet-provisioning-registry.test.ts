import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, describe, expect, it } from 'vitest';
import { credentialFiles } from '#local/iot';
import { createClaimRepo } from '#shared/data/claim-repo';
import { createSerialRepo } from '#shared/data/serial-repo';
import { formatClaimCode, newClaimCode } from '#shared/domain/claim-code';
import { hashSecret } from '#shared/secrets';
import { Browser, createAccount, formFields, signIn } from '../support/oauth-client';
import { makeDevice } from '../support/factories';
import { connectedOf } from '../support/iot-devices';
import { useTable, useTestService } from '../support/service';

// Fleet provisioning by claim in the local IoT Core stand-in as `npm start` wires it (local/iot.ts):
// the registry stand-in is the one record of which thing a certificate is attached to, so the
// certificate RegisterThing attached is known to it as the device's, the broker lets it connect as
// that device only, and the owner's removal deactivates it there (UpdateCertificate), after which the
// broker refuses it. (test/e2e/fleet-provisioning-mqtt.test.ts runs the stand-in without a registry.)

const CREATE = '$aws/certificates/create/json';

describe('fleet provisioning with the registry stand-in', () => {
  const service = useTestService({ iot: true });
  const { doc } = useTable(service, { requestTimeoutMs: 10_000 });
  const clients: MqttClient[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true)));
  });

  function client(cert: string | Buffer, key: string | Buffer, clientId: string) {
    const c = mqtt.connect(service.iot!.broker.url, {
      clientId, cert, key, ca: service.iot!.ca.certPem, keepalive: 30, reconnectPeriod: 0, protocolVersion: 4,
    });
    clients.push(c);
    return c;
  }
  /** The answer on `topic`'s accepted or rejected topic to one request of `c`. */
  async function ask(c: MqttClient, topic: string, body: unknown): Promise<{ topic: string; body: Record<string, string> }> {
    await c.subscribeAsync([`${topic}/accepted`, `${topic}/rejected`], { qos: 1 });
    const answer = new Promise<{ topic: string; body: Record<string, string> }>((resolve) => {
      c.once('message', (answered, payload) => resolve({ topic: answered, body: JSON.parse(payload.toString()) as Record<string, string> }));
    });
    await c.publishAsync(topic, JSON.stringify(body), { qos: 1 });
    return answer;
  }

  it('attaches the new certificate in the registry: it connects as its device only, and its owner\'s removal deactivates it', async () => {
    // A listed serial, as allow-serials makes it.
    const serial = `SN-${randomUUID().slice(0, 8)}`;
    const device = makeDevice({ connected: false });
    const code = newClaimCode();
    await createClaimRepo({ doc, table: service.tableName }).createUnclaimedDevice(device, hashSecret(code));
    await createSerialRepo({ doc, table: service.tableName }).allowSerial(serial, device.id);

    // The device's first start, with the factory's claim certificate from the service's iot folder.
    const claimFiles = credentialFiles(service.iot!.credentialsDir, 'claim');
    const factory = client(readFileSync(claimFiles.cert), readFileSync(claimFiles.key), `factory-${randomUUID()}`);
    await connectedOf(factory);
    const created = await ask(factory, CREATE, {});
    expect(created.topic).toBe(`${CREATE}/accepted`);
    const { certificateId, certificatePem, privateKey, certificateOwnershipToken } = created.body;
    expect(service.iot!.registry.thingOf(certificateId!)).toBeUndefined();
    const registered = await ask(factory, `$aws/provisioning-templates/${service.iot!.fleetTemplate}/provision/json`, {
      certificateOwnershipToken, parameters: { SerialNumber: serial },
    });
    expect(registered).toMatchObject({ topic: expect.stringMatching(/\/accepted$/), body: { thingName: device.id } });
    expect(service.iot!.registry.thingOf(certificateId!)).toBe(device.id);

    const own = client(certificatePem!, privateKey!, device.id);
    await connectedOf(own);
    await own.endAsync();
    await expect(connectedOf(client(certificatePem!, privateKey!, randomUUID()))).rejects.toMatchObject({ code: 5 });

    // Claimed from the label, then removed by its owner: the registry deactivates the certificate, the broker refuses it.
    const owner = await createAccount(service);
    const browser = new Browser(service.authUrl);
    expect((await signIn(browser, owner, '/account/devices')).status).toBe(303);
    let page = await browser.get('/account/devices');
    const claimed = await browser.postForm('/account/devices/claim', { ...formFields(page.text, '/account/devices/claim'), claim_code: formatClaimCode(code) });
    expect(claimed.status).toBe(303);
    page = await browser.get('/account/devices');
    const removed = await browser.postForm(`/account/devices/${device.id}/remove`, formFields(page.text, `/account/devices/${device.id}/remove`));
    expect(removed.status).toBe(303);
    expect(service.iot!.registry.calls()).toContainEqual({ operation: 'UpdateCertificate', target: certificateId, detail: 'INACTIVE' });
    await expect(connectedOf(client(certificatePem!, privateKey!, device.id))).rejects.toMatchObject({ code: 5 });
  }, 60_000);
});

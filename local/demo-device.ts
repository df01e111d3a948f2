import { readFileSync } from 'node:fs';
import mqtt, { type MqttClient } from 'mqtt';
import type { FirmwareState } from '#local/device-firmware';
import { credentialFiles } from '#local/iot';
import { DEMO_USERS } from '#local/seed';

/**
 * A device's MQTT connection to the local IoT Core stand-in (`iot`: its URL and its credentials
 * folder, where `npm start` writes the demo devices' files and `npm run admin -- provision-device` a
 * provisioned device's), with its own certificate and its id as client id, as its firmware connects
 * to AWS IoT Core. No reconnection: the caller decides what a closed connection means.
 */
export function connectDevice(iot: { url: string; credentialsDir: string }, deviceId: string): MqttClient {
  const files = credentialFiles(iot.credentialsDir, deviceId);
  return mqtt.connect(iot.url, {
    clientId: deviceId, cert: readFileSync(files.cert), key: readFileSync(files.key), ca: readFileSync(files.ca),
    keepalive: 30, reconnectPeriod: 0, protocolVersion: 4,
  });
}

/** A demo device's state at its first start: its seeded `active` and `sound`, its firmware version, no owner's command applied yet. */
export function seededFirmwareState(deviceId: string): FirmwareState {
  const seeded = DEMO_USERS.flatMap((demo): readonly { id: string; active: boolean; sound: boolean }[] => demo.devices).find((d) => d.id === deviceId);
  return { active: seeded?.active ?? false, sound: seeded?.sound ?? true, version: '2.4.1', command: 0 };
}

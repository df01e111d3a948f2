import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { connectDevice, seededFirmwareState } from '#local/demo-device';
import { runFirmware } from '#local/device-firmware';
import { fail, parseCommandLine, usageError } from '#local/cli';
import { credentialFiles } from '#local/iot';
import { readServiceFacts } from '#local/service';
import { normalizeDeviceId } from '#shared/domain/device';

// `npm run device -- [<device id>]`: a device simulator. It connects one device of the running local
// service (default: the first demo device that `npm start` does not run itself) to its IoT Core
// stand-in with the device's certificate and key from the service's iot folder, where `npm start`
// writes the demo devices' and `npm run admin -- provision-device` a provisioned device's, as the
// device itself would connect to AWS IoT Core, and stays connected until Ctrl-C (or SIGTERM), when it
// disconnects cleanly. A refusal at CONNECT (a deactivated certificate: the device was removed from
// its account or reset) or a connection that closes ends it with a message and exit status 1. Its
// presence shows in GET /devices, on the account's device list and, through the webhook, on the
// example application's device page. It obeys its shadow (local/device-firmware.ts): an owner's PUT
// of `active` or `sound` reaches it as a delta, at once or when it reconnects; typing `s` or `a` and
// Enter presses its button (sound, away), which it reports, and the change shows in the API and,
// through the webhook, in the example application.

const USAGE = `Usage: npm run device -- [<device id>]
  Connects a device of the running local service (npm start) with its certificate and key from the
  service's iot folder: a demo device (default: the first one npm start does not connect itself), or a
  device provisioned with npm run admin -- provision-device (its <device id>.cert.pem and .key.pem).`;
const tool = { name: 'device', usage: USAGE };
const { positionals } = parseCommandLine(tool, { allowPositionals: true, options: {} });
if (positionals.length > 1) usageError(tool, `Unexpected argument '${positionals[1]}'`);
let facts;
try {
  facts = readServiceFacts();
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
if (!facts.iot) {
  console.error('The running local service has no IoT Core stand-in: restart it with npm start.');
  process.exit(1);
}
const given = positionals[0] ?? facts.users.flatMap((user) => user.devices).find((id) => id !== facts.iot!.connectedDevice)!;
// A device id only (a UUID): no other file of the folder (the CA's, the factory's claim certificate) is a device's.
const deviceId = normalizeDeviceId(given);
if (!deviceId) usageError(tool, `${given} is not a device id (a UUID)`);
const files = credentialFiles(facts.iot.credentialsDir, deviceId);
if (!existsSync(files.cert) || !existsSync(files.key)) {
  fail(`${deviceId} is neither a demo device of the running service nor a device provisioned to it (no ${deviceId}.cert.pem and ${deviceId}.key.pem in ${facts.iot.credentialsDir}).\n${USAGE}`);
}
const client = connectDevice(facts.iot, deviceId);
client.on('connect', () => {
  console.log(`Device ${deviceId} connected to ${facts.iot!.url}. Type s or a and Enter to press its button (sound, away); Ctrl-C to disconnect.`);
  void runFirmware(client, deviceId, seededFirmwareState(deviceId), (line) => console.log(line)).then((firmware) => {
    // The button: a line on the terminal (or the test's stdin).
    createInterface({ input: process.stdin }).on('line', (line) => {
      const key = line.trim().toLowerCase();
      if (key === 's' || key === 'a') void firmware.press(key === 's' ? 'sound' : 'active');
    });
  });
});
client.on('error', (error) => {
  // While disconnecting, the broker may close the socket before the client has (ECONNRESET): the
  // disconnection asked for has happened.
  if (stopping) {
    console.log(`Device ${deviceId} disconnected.`);
    process.exit(0);
  }
  // CONNACK 5 (not authorized): IoT Core's answer to an INACTIVE certificate, or one not attached to this thing.
  const refused = 'code' in error && error.code === 5;
  console.error(refused
    ? `Device ${deviceId} was refused by the broker (not authorized): its certificate is deactivated (the device was removed from its account or reset) or is not this device's.`
    : `Device ${deviceId} could not connect: ${error.message}`);
  process.exit(1);
});
client.on('close', () => {
  if (stopping) return;
  // No reconnection: a connection that closed ends the simulator rather than leave it waiting.
  console.error(`Device ${deviceId}: the connection closed.`);
  process.exit(1);
});
let stopping = false;
const stop = () => {
  stopping = true;
  client.end(false, {}, () => {
    console.log(`Device ${deviceId} disconnected.`);
    process.exit(0);
  });
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

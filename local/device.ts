import { createInterface } from 'node:readline';
import { connectDemoDevice, seededFirmwareState } from '#local/demo-device';
import { runFirmware } from '#local/device-firmware';
import { readServiceFacts } from '#local/service';

// `npm run device -- [<device id>]`: a device simulator. It connects one demo device (default: the
// first demo device that `npm start` does not run itself) to the running local service's IoT Core stand-in with its
// certificate, as the device itself would connect to AWS IoT Core, and stays connected until Ctrl-C
// (or SIGTERM), when it disconnects cleanly. Its presence shows in GET /devices, on the account's
// device list and, through the webhook, on the example application's device page. It obeys its
// shadow (local/device-firmware.ts): an owner's PUT of `active` or `sound` reaches it as a delta, at
// once or when it reconnects; typing `s` or `a` and Enter presses its button (sound, away), which it
// reports, and the change shows in the API and, through the webhook, in the example application.

const USAGE = 'Usage: npm run device -- [<device id>]   (a demo device of the running local service; default: the first one npm start does not connect itself)';
const args = process.argv.slice(2);
if (args.includes('--help')) {
  console.log(USAGE);
  process.exit(0);
}
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
const deviceId = args[0] ?? facts.users.flatMap((user) => user.devices).find((id) => id !== facts.iot!.connectedDevice)!;
if (!facts.users.some((user) => user.devices.includes(deviceId))) {
  console.error(`${deviceId} is not a demo device of the running service. ${USAGE}`);
  process.exit(2);
}
const client = connectDemoDevice(facts.iot, deviceId);
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
  console.error(`Device ${deviceId} could not connect: ${error.message}`);
  process.exit(1);
});
client.on('close', () => {
  if (!stopping) console.error(`Device ${deviceId}: the connection closed.`);
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

import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import mqtt from 'mqtt';
import { runFirmware } from '#local/device-firmware';
import { credentialFiles } from '#local/iot';
import { DEMO_USERS, readServiceFacts } from '#local/service';

// `npm run device -- [<device id>]`: a device simulator. It connects one demo device (default: the
// first demo user's first device) to the running local service's IoT Core stand-in with its
// certificate, as the device itself would connect to AWS IoT Core, and stays connected until Ctrl-C
// (or SIGTERM), when it disconnects cleanly. Its presence shows in GET /devices, on the account's
// device list and, through the webhook, on the example application's device page. It obeys its
// shadow (local/device-firmware.ts): an owner's PUT of `active` or `sound` reaches it as a delta, at
// once or when it reconnects; typing `s` or `a` and Enter presses its button (sound, away), which it
// reports, and the change shows in the API and, through the webhook, in the example application.

const USAGE = 'Usage: npm run device -- [<device id>]   (a demo device of the running local service; default: the first one)';
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
const deviceId = args[0] ?? facts.users[0]!.devices[0]!;
if (!facts.users.some((user) => user.devices.includes(deviceId))) {
  console.error(`${deviceId} is not a demo device of the running service. ${USAGE}`);
  process.exit(2);
}
const files = credentialFiles(facts.iot.credentialsDir, deviceId);
const client = mqtt.connect(facts.iot.url, {
  clientId: deviceId, cert: readFileSync(files.cert), key: readFileSync(files.key), ca: readFileSync(files.ca),
  keepalive: 30, reconnectPeriod: 0, protocolVersion: 4,
});
client.on('connect', () => {
  console.log(`Device ${deviceId} connected to ${facts.iot!.url}. Type s or a and Enter to press its button (sound, away); Ctrl-C to disconnect.`);
  const seeded = DEMO_USERS.flatMap((demo): readonly { id: string; active: boolean; sound: boolean }[] => demo.devices).find((d) => d.id === deviceId);
  const initial = { active: seeded?.active ?? false, sound: seeded?.sound ?? true, version: '2.4.1', command: 0 };
  void runFirmware(client, deviceId, initial, (line) => console.log(line)).then((firmware) => {
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

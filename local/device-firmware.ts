import type { MqttClient } from 'mqtt';
import { shadowTopic } from '#local/iot-shadow';

/** What the simulated device is: its device-side state and the last owner's command it applied. */
export interface FirmwareState {
  active: boolean;
  sound: boolean;
  version: string;
  command: number;
}

export interface Firmware {
  state: FirmwareState;
  /** The owner pressed the device's button: `field` flips here, is reported, and its desired value is cleared. */
  press(field: 'active' | 'sound'): Promise<void>;
}

/**
 * A device's shadow behaviour, as firmware on AWS IoT Core does it, over an mqtt.js connection: it
 * subscribes to its shadow's delta and get answers, reports its state and asks for its shadow (the
 * delta it missed while away), obeys each delta (takes its `active` and `sound`, reports them with the
 * delta's `command`), and reports a button press with that desired member cleared. `say` is told of
 * each change.
 */
export async function runFirmware(client: MqttClient, thing: string, initial: FirmwareState, say: (line: string) => void): Promise<Firmware> {
  const root = shadowTopic(thing);
  const state = { ...initial };
  const report = (clear: string[] = []) => client.publishAsync(`${root}/update`, JSON.stringify({
    state: { reported: state, ...(clear.length ? { desired: Object.fromEntries(clear.map((f) => [f, null])) } : {}) },
  }), { qos: 1 });
  const obey = (delta: Record<string, unknown>) => {
    const changed: string[] = [];
    for (const field of ['active', 'sound'] as const) {
      if (typeof delta[field] === 'boolean' && delta[field] !== state[field]) {
        state[field] = delta[field];
        changed.push(`${field} → ${delta[field]}`);
      }
    }
    if (typeof delta.command === 'number') state.command = delta.command;
    if (changed.length) say(`Device ${thing} obeys: ${changed.join(', ')} (command ${state.command}).`);
    return report();
  };
  client.on('message', (topic, payload) => {
    let body: { state?: Record<string, unknown> & { delta?: Record<string, unknown> } };
    try {
      body = JSON.parse(payload.toString()) as typeof body;
    } catch {
      return;
    }
    if (topic === `${root}/update/delta` && body.state) void obey(body.state);
    if (topic === `${root}/get/accepted` && body.state?.delta) void obey(body.state.delta);
  });
  await client.subscribeAsync([`${root}/update/delta`, `${root}/get/accepted`], { qos: 1 });
  await report();
  await client.publishAsync(`${root}/get`, '{}', { qos: 1 });
  return {
    state,
    async press(field) {
      state[field] = !state[field];
      say(`Device ${thing}: button pressed, ${field} → ${state[field]}.`);
      await report([field]);
    },
  };
}

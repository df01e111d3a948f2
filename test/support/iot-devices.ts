import type { MqttClient } from 'mqtt';
import type { IotBroker, LifecycleMessage } from '#local/iot-broker';
import type { LocalService } from '#local/service';
import { tokenFor } from './service';

/** The next lifecycle event the broker's presence rule handled for `clientId` of `type`, and what the rule answered. */
export const lifecycleRecorded = (broker: IotBroker, clientId: string, type: string) => new Promise<[LifecycleMessage, unknown]>((resolve) => {
  const listener = (event: LifecycleMessage, result: unknown) => {
    if (event.clientId !== clientId || event.eventType !== type) return;
    broker.events.off('recorded', listener);
    resolve([event, result]);
  };
  broker.events.on('recorded', listener);
});

/** The client's next `connect`, or its next `error` (a refusal: its CONNACK code). */
export const connectedOf = (c: MqttClient) => new Promise<void>((resolve, reject) => {
  c.once('connect', () => resolve());
  c.once('error', reject);
});

/** Device `id` as GET /devices shows it to `userId` (read_device), if it lists it. */
export async function listedDevice(service: LocalService, userId: string, id: string) {
  const token = await tokenFor(service, userId, ['read_device']);
  const res = await fetch(`${service.apiUrl}/devices`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { id: string; connected: boolean }[]).find((d) => d.id === id);
}

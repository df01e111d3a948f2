import { GetThingShadowCommand, IoTDataPlaneClient, UpdateThingShadowCommand } from '@aws-sdk/client-iot-data-plane';
import { awsClientConfig, localEndpointConfig, observeClient } from '#shared/aws/client-config';
import type { DesiredState } from '#shared/domain/shadow';

/** A device's shadow as the cloud reads it: its version and desired state (undefined: no shadow yet). */
export interface ShadowSnapshot {
  version: number;
  desired?: Record<string, unknown>;
}

/** The devices' classic shadows, through AWS IoT Core's data-plane API (the thing is named after the device id). */
export interface DeviceShadows {
  /** The shadow's version and desired state, or undefined when the thing has no shadow. One GetThingShadow. */
  read(deviceId: string): Promise<ShadowSnapshot | undefined>;
  /**
   * Merges `desired` into the shadow's desired state, only if the shadow is still at `version` (none:
   * whatever it is): `conflict` when it moved on (IoT Core's 409), nothing changed. One UpdateThingShadow.
   */
  writeDesired(deviceId: string, desired: DesiredState, version: number | undefined): Promise<'updated' | 'conflict'>;
}

const named = (error: unknown, name: string) => (error as { name?: string } | undefined)?.name === name;

/** The shadows through `client`. */
export function createDeviceShadows(client: IoTDataPlaneClient): DeviceShadows {
  return {
    async read(deviceId) {
      try {
        const { payload } = await client.send(new GetThingShadowCommand({ thingName: deviceId }));
        const document = JSON.parse(Buffer.from(payload ?? new Uint8Array()).toString('utf8')) as { version: number; state?: { desired?: Record<string, unknown> } };
        return { version: document.version, ...(document.state?.desired ? { desired: document.state.desired } : {}) };
      } catch (error) {
        if (named(error, 'ResourceNotFoundException')) return undefined;
        throw error;
      }
    },
    async writeDesired(deviceId, desired, version) {
      const body = { state: { desired }, ...(version !== undefined ? { version } : {}) };
      try {
        await client.send(new UpdateThingShadowCommand({ thingName: deviceId, payload: Buffer.from(JSON.stringify(body)) }));
        return 'updated';
      } catch (error) {
        if (named(error, 'ConflictException')) return 'conflict';
        throw error;
      }
    },
  };
}

/**
 * The shadows through a new data-plane client: IoT Core's default data endpoint of the region in
 * AWS; given `endpoint` (the local service), the local stand-in (local/iot-data-plane.ts).
 */
export function iotDeviceShadows(endpoint?: string, region?: string): DeviceShadows {
  return createDeviceShadows(observeClient(new IoTDataPlaneClient({ ...awsClientConfig(), ...localEndpointConfig(endpoint, region) })));
}

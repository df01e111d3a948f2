import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { LocalCa } from '#local/iot-ca';

// A local stand-in for AWS IoT Core's registry, for what provisioning and deactivating a device's
// certificate use: it speaks the IoT control plane's REST protocol on loopback, so the service's real
// SDK client (@aws-sdk/client-iot, its middleware and retries) runs unchanged against it, with real
// certificates from the local CA (local/iot-ca.ts). CreateThing, CreateKeysAndCertificate (ACTIVE),
// AttachPolicy, AttachThingPrincipal, UpdateCertificate (INACTIVE puts the certificate in the
// broker's `revoked` set: refused at its next CONNECT). Every call is recorded for the tests.

/** One call the stand-in answered: the operation and what it named. */
export interface RegistryCall {
  operation: 'CreateThing' | 'CreateKeysAndCertificate' | 'AttachPolicy' | 'AttachThingPrincipal' | 'UpdateCertificate';
  target: string;
  detail?: string;
}

export interface IotRegistry {
  /** `http://127.0.0.1:<port>`: the SDK's endpoint (AWS_ENDPOINT_URL_IOT). */
  url: string;
  /** The thing a certificate is attached to (the broker checks the client id against it). */
  thingOf(certificateId: string): string | undefined;
  /** Records an active certificate made elsewhere (fleet provisioning: local/iot-fleet.ts) as attached to `thing`, so UpdateCertificate finds it and `thingOf` names its thing. */
  attach(certificateId: string, thing: string): void;
  /** Every call answered, oldest first. */
  calls(): RegistryCall[];
  stop(): Promise<void>;
}

const REGION_ACCOUNT = 'us-east-1:000000000000';

/** Starts the registry on a free port of 127.0.0.1; `revoked` is the broker's set of refused certificate ids. */
export async function startIotRegistry(ca: LocalCa, revoked: Set<string>): Promise<IotRegistry> {
  const things = new Set<string>();
  const certificates = new Map<string, { arn: string; status: 'ACTIVE' | 'INACTIVE'; thing?: string; policies: string[] }>();
  const calls: RegistryCall[] = [];

  async function answer(req: IncomingMessage, url: URL): Promise<[number, object]> {
    const body = await new Promise<string>((resolve) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      req.on('end', () => resolve(text));
    });
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const notFound = (what: string): [number, object] => [404, { __type: 'ResourceNotFoundException', message: `${what} does not exist` }];
    if (req.method === 'POST' && parts[0] === 'things' && parts.length === 2) {
      things.add(parts[1]!);
      calls.push({ operation: 'CreateThing', target: parts[1]! });
      return [200, { thingName: parts[1], thingArn: `arn:aws:iot:${REGION_ACCOUNT}:thing/${parts[1]}`, thingId: randomUUID() }];
    }
    if (req.method === 'POST' && parts[0] === 'keys-and-certificate') {
      const issued = await ca.issue('AWS IoT Certificate');
      const arn = `arn:aws:iot:${REGION_ACCOUNT}:cert/${issued.certificateId}`;
      certificates.set(issued.certificateId, { arn, status: url.searchParams.get('setAsActive') === 'true' ? 'ACTIVE' : 'INACTIVE', policies: [] });
      if (url.searchParams.get('setAsActive') !== 'true') revoked.add(issued.certificateId);
      calls.push({ operation: 'CreateKeysAndCertificate', target: issued.certificateId });
      return [200, { certificateArn: arn, certificateId: issued.certificateId, certificatePem: issued.certPem, keyPair: { PublicKey: '', PrivateKey: issued.keyPem } }];
    }
    if (req.method === 'PUT' && parts[0] === 'target-policies' && parts.length === 2) {
      const target = String((JSON.parse(body || '{}') as { target?: string }).target);
      const certificate = [...certificates.values()].find((c) => c.arn === target);
      if (!certificate) return notFound(`Target ${target}`);
      certificate.policies.push(parts[1]!);
      calls.push({ operation: 'AttachPolicy', target, detail: parts[1] });
      return [200, {}];
    }
    if (req.method === 'PUT' && parts[0] === 'things' && parts[2] === 'principals') {
      const principal = String(req.headers['x-amzn-principal']);
      const certificate = [...certificates.values()].find((c) => c.arn === principal);
      if (!things.has(parts[1]!)) return notFound(`Thing ${parts[1]}`);
      if (!certificate) return notFound(`Principal ${principal}`);
      certificate.thing = parts[1];
      calls.push({ operation: 'AttachThingPrincipal', target: parts[1]!, detail: principal });
      return [200, {}];
    }
    if (req.method === 'PUT' && parts[0] === 'certificates' && parts.length === 2) {
      const certificate = certificates.get(parts[1]!);
      const status = url.searchParams.get('newStatus');
      if (!certificate) return notFound(`Certificate ${parts[1]}`);
      if (status !== 'INACTIVE' && status !== 'ACTIVE') return [400, { __type: 'InvalidRequestException', message: `Unsupported status ${status}` }];
      certificate.status = status;
      if (status === 'INACTIVE') revoked.add(parts[1]!);
      else revoked.delete(parts[1]!);
      calls.push({ operation: 'UpdateCertificate', target: parts[1]!, detail: status });
      return [200, {}];
    }
    return [400, { __type: 'InvalidRequestException', message: `The stand-in does not know ${req.method} ${url.pathname}` }];
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    answer(req, url).then(([status, body]) => {
      const type = (body as { __type?: string }).__type;
      res.writeHead(status, { 'content-type': 'application/json', ...(type ? { 'x-amzn-errortype': type } : {}) }).end(JSON.stringify(body));
    }, (error: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json', 'x-amzn-errortype': 'InternalFailureException' }).end(JSON.stringify({ message: String(error) }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    thingOf: (certificateId) => certificates.get(certificateId)?.thing,
    attach(certificateId, thing) {
      things.add(thing);
      certificates.set(certificateId, { arn: `arn:aws:iot:${REGION_ACCOUNT}:cert/${certificateId}`, status: 'ACTIVE', thing, policies: ['local-device-policy'] });
    },
    calls: () => [...calls],
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

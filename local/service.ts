import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import { AWS_ENV, ENV, LOCAL_ENV, MAIL_ENV, optionalEnv, SHADOW_ENV, WEBHOOK_ENV } from '#shared/config';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createLocalSigner } from '#shared/keys/local-signer';
import { startAwsStandIns, type AwsStandIns } from '#local/aws-stand-ins';
import { createJwtAuthorizer } from '#local/jwt-authorizer';
import { createTable, startDynamoDbLocal, type DynamoDbLocal } from '#local/dynamodb-local';
import { startGateway } from '#local/gateway';
import { DEMO_CLIENT, DEMO_USERS, seedDemoData } from '#local/seed';
import { startLocalWebhooks, type InvocationObserver, type LocalWebhooks } from '#local/webhooks';
import type { LocalIot } from '#local/iot';

export interface LocalServiceOptions {
  /** Ports of the two hosts; 0 picks free ones. */
  apiPort: number;
  authPort: number;
  /** Use an already running DynamoDB Local instead of starting one. */
  dynamodbEndpoint?: string;
  /** Keep DynamoDB Local's data in this folder instead of memory. */
  dataDir?: string;
  tableName?: string;
  /** Folder for the local signing key and service.json. */
  stateDir?: string;
  /** Folder of the e-mail outbox; default `<stateDir>/outbox`. */
  outboxDir?: string;
  seed?: boolean;
  /**
   * Sign with "KMS" and mail with "SES" through the real SDK clients, against local stand-ins of
   * both (same key file, same outbox), as the functions do in AWS. Default: the key file and the
   * outbox directly.
   */
  awsStandIns?: boolean;
  /**
   * The webhook pipeline: the stream reader (fan-out) and the queue stand-in (delivery), the real
   * retry schedule multiplied by `timeScale` (default 1). `false`: none.
   */
  webhooks?: { timeScale?: number; observe?: InvocationObserver } | false;
  /** The IoT Core stand-in (local/iot.ts: broker, shadows, rules), with credentials for every demo device under `<stateDir>/iot`. Default: none. */
  iot?: boolean;
  /**
   * The longest pause between reads of the table's stream by an idle reader (the webhook fan-out's,
   * the desired state's), ms; default 2000. Every invocation of a function in this process brings
   * the readers back to Lambda's pace at once: this bounds only how late another process's writes
   * (`npm run admin`) are read.
   */
  streamIdlePollMs?: number;
}

export interface LocalService {
  apiUrl: string;
  authUrl: string;
  tableName: string;
  dynamodbEndpoint: string;
  signingKeyFile: string;
  /** Folder where account e-mail is written (also listed at {authUrl}/outbox). */
  outboxDir: string;
  /** Present with `awsStandIns`: the KMS and SES stand-ins. */
  aws?: AwsStandIns;
  /** The webhook pipeline, unless turned off. */
  webhooks?: LocalWebhooks;
  /** With `iot`: the IoT Core stand-in (local/iot.ts). */
  iot?: LocalIot;
  stop(): Promise<void>;
}

/**
 * Runs the whole service locally: DynamoDB Local, the table, demo data, and both hosts behind
 * the API Gateway stand-in, running the same handler code as Lambda. Handlers read their
 * configuration from the environment, so it is set here before the first handler loads.
 */
export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  const stateDir = resolve(options.stateDir ?? '.local');
  const tableName = options.tableName ?? 'device-user-service';
  const signingKeyFile = join(stateDir, 'signing-key.pem');
  const outboxDir = resolve(options.outboxDir ?? join(stateDir, 'outbox'));
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const fn of stops.reverse()) await fn();
  };
  try {
    let ddb: DynamoDbLocal | undefined;
    if (!options.dynamodbEndpoint) {
      ddb = await startDynamoDbLocal({ dataDir: options.dataDir });
      stops.push(ddb.stop);
    }
    const dynamodbEndpoint = options.dynamodbEndpoint ?? ddb!.endpoint;
    await createTable(dynamodbEndpoint, tableName);
    if (options.seed !== false) {
      const doc = createDocumentClient({ endpoint: dynamodbEndpoint });
      await seedDemoData(doc, tableName);
      doc.destroy();
    }

    /** The table's stream, as the local event source mappings read it. */
    const stream = { endpoint: dynamodbEndpoint, tableName, idlePollMs: options.streamIdlePollMs };
    // The delivery queue's URL is part of the handlers' environment: it starts before they load.
    const webhooks = options.webhooks === false ? undefined : await startLocalWebhooks(stream, options.webhooks?.timeScale ?? 1, options.webhooks?.observe);
    if (webhooks) stops.push(webhooks.stop);

    // Handlers load on first request, after the environment below names both hosts.
    let authorize: ReturnType<typeof createJwtAuthorizer> | undefined;
    const auth = await startGateway({ api: 'auth', port: options.authPort });
    stops.push(() => close(auth.server));
    const api = await startGateway({
      api: 'resource',
      port: options.apiPort,
      authorize: (header, scopes) => authorize!(header, scopes),
    });
    stops.push(() => close(api.server));
    authorize = createJwtAuthorizer({ issuer: auth.url, audience: [api.url] });

    const service: LocalService = { apiUrl: api.url, authUrl: auth.url, tableName, dynamodbEndpoint, signingKeyFile, outboxDir, stop, webhooks };
    useServiceEnvironment(service);
    if (webhooks) await webhooks.startReading();
    if (options.iot) {
      // Loaded only when asked: the broker and the CA's libraries are not every local service's.
      const { startLocalIot } = await import('#local/iot');
      service.iot = await startLocalIot(stateDir, DEMO_USERS.flatMap((demo) => demo.devices.map((d) => d.id)), stream);
      stops.push(service.iot.stop);
      // The functions' IoT client (a removed device's certificate deactivated) reaches the registry stand-in.
      Object.assign(process.env, {
        AWS_ENDPOINT_URL_IOT: service.iot.registry.url, [AWS_ENV.region]: process.env[AWS_ENV.region] ?? 'us-east-1',
        AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'local', AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
      });
    }
    if (options.awsStandIns) {
      createLocalSigner(signingKeyFile);
      service.aws = await startAwsStandIns({ signingKeyFile, outboxDir, configurationSets: [LOCAL_CONFIGURATION_SET] });
      stops.push(service.aws.stop);
      // The SDK reads service-specific endpoints from AWS_ENDPOINT_URL_<SERVICE>.
      Object.assign(process.env, {
        [ENV.signingKeyId]: service.aws.keyArn,
        [MAIL_ENV.sender]: 'no-reply@localhost',
        [MAIL_ENV.configurationSet]: LOCAL_CONFIGURATION_SET,
        AWS_ENDPOINT_URL_KMS: service.aws.url,
        AWS_ENDPOINT_URL_SES: service.aws.url,
        AWS_ENDPOINT_URL_CLOUDFORMATION: service.aws.url,
        [AWS_ENV.region]: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
      });
      delete process.env[MAIL_ENV.outboxDir];
    }
    return service;
  } catch (error) {
    await stop();
    throw error;
  }
}

export { DEMO_USERS };

/** The SES configuration set the stand-in has, and the mail functions name with `awsStandIns`. */
export const LOCAL_CONFIGURATION_SET = 'local-account-mail';

/** Where the local service's handlers find their table, hosts, signing key and outbox. */
export type ServiceEnvironment = Pick<LocalService, 'apiUrl' | 'authUrl' | 'tableName' | 'dynamodbEndpoint' | 'signingKeyFile' | 'outboxDir'> & {
  /** The webhook delivery queue (stand-in) of a service running its webhook pipeline. */
  webhookQueue?: { queueUrl: string; endpoint: string };
};

/**
 * Gives this process the environment the local service's handlers run with (local key, outbox,
 * DynamoDB Local), so a handler run outside the gateway (`npm run invoke`) behaves the same.
 * What the handlers use (shared/runtime.ts) is built from it once, at their first load or use.
 */
export function useServiceEnvironment(service: ServiceEnvironment): void {
  Object.assign(process.env, {
    [ENV.tableName]: service.tableName,
    [ENV.dynamodbEndpoint]: service.dynamodbEndpoint,
    [ENV.issuer]: service.authUrl,
    [ENV.audience]: service.apiUrl,
    [ENV.localSigningKeyFile]: service.signingKeyFile,
    [MAIL_ENV.outboxDir]: service.outboxDir,
  });
  const queue = service.webhookQueue ?? (service as Partial<LocalService>).webhooks?.queue;
  if (queue) {
    Object.assign(process.env, {
      [WEBHOOK_ENV.queueUrl]: queue.queueUrl,
      [WEBHOOK_ENV.sqsEndpoint]: 'endpoint' in queue ? queue.endpoint : queue.url,
      [WEBHOOK_ENV.allowLocalHttp]: 'true',
    });
  }
  // A running service's shadows (its data-plane stand-in), for a desired-state function run outside it.
  const dataPlaneUrl = (service as Partial<ServiceFacts>).iot?.dataPlaneUrl;
  if (dataPlaneUrl) process.env[SHADOW_ENV.dataEndpoint] = dataPlaneUrl;
  // Set in the shell for AWS work, it would send the handlers to KMS instead of the local key.
  delete process.env[ENV.signingKeyId];
}

/** The folder of `npm start`'s state (signing key, outbox, service.json): STATE_DIR, default `.local`. */
export function localStateDir(): string {
  return optionalEnv(LOCAL_ENV.stateDir) ?? '.local';
}

/** Where `npm start` writes the running service's facts and the command-line tools read them. */
export function serviceFactsFile(): string {
  return join(localStateDir(), 'service.json');
}

/** What scripts need to know about a running local service; `npm start` writes it to `.local/service.json`. */
export interface ServiceFacts extends ServiceEnvironment {
  /** The webhook fan-out's stream-failures queue (stand-in), for `npm run admin -- replay-stream-failures`. */
  streamFailures?: { queueUrl: string; endpoint: string };
  /** With the IoT Core stand-in: its URL and credentials, its stand-ins' endpoints, and the demo device `npm start` connects itself. */
  iot?: { url: string; credentialsDir: string; registryUrl?: string; dataPlaneUrl?: string; connectedDevice?: string };
  demoClient: { clientId: string; clientSecret: string; redirectUri: string };
  users: { id: string; email: string; emailConfirmed: boolean; password: string; devices: string[] }[];
}

/** The facts of a running service seeded with the demo data; `redirectUri` is the example app's callback. */
export function serviceFacts(service: LocalService, redirectUri: string = DEMO_CLIENT.redirectUris[0]): ServiceFacts {
  const { apiUrl, authUrl, tableName, dynamodbEndpoint, signingKeyFile, outboxDir, webhooks, iot } = service;
  return {
    apiUrl, authUrl, tableName, dynamodbEndpoint, signingKeyFile, outboxDir,
    ...(webhooks ? {
      webhookQueue: { queueUrl: webhooks.queue.queueUrl, endpoint: webhooks.queue.url },
      streamFailures: { queueUrl: webhooks.streamFailures.queueUrl, endpoint: webhooks.streamFailures.url },
    } : {}),
    ...(iot ? { iot: { url: iot.broker.url, credentialsDir: iot.credentialsDir, registryUrl: iot.registry.url, dataPlaneUrl: iot.dataPlane.url } } : {}),
    demoClient: { clientId: DEMO_CLIENT.clientId, clientSecret: DEMO_CLIENT.clientSecret, redirectUri },
    users: DEMO_USERS.map(({ user, password, devices }) => ({
      id: user.id, email: user.email, emailConfirmed: user.email_confirmed, password, devices: devices.map((d) => d.id),
    })),
  };
}

const FACT_NAMES = ['apiUrl', 'authUrl', 'tableName', 'dynamodbEndpoint', 'signingKeyFile', 'outboxDir', 'demoClient', 'users'] as const;

/**
 * The facts `npm start` wrote; throws a one-line message when there are none (no service started)
 * or a fact is missing (a file from an older version).
 */
export function readServiceFacts(file: string = serviceFactsFile()): ServiceFacts {
  if (!existsSync(file)) throw new Error(`No running local service (${file} is missing): start it with npm start.`);
  const facts = JSON.parse(readFileSync(file, 'utf8')) as Partial<ServiceFacts>;
  const missing = FACT_NAMES.filter((name) => facts[name] === undefined);
  if (missing.length) throw new Error(`${file} lacks ${missing.join(', ')}: restart the local service (npm start) to rewrite it.`);
  return facts as ServiceFacts;
}

function close(server: Server): Promise<void> {
  return new Promise((resolveClose) => {
    server.close(() => resolveClose());
    server.closeAllConnections();
  });
}

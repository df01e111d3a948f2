import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createOutboxMailer } from '#shared/email/outbox-mailer';
import { describeStacks, type StandInStack } from '#local/cloudformation-stand-in';

// KMS and SES have no local engine. These stand-ins speak their wire protocols on loopback, so the
// service's real SDK clients (with their middleware, timeouts and retries) run unchanged against them:
// KMS's JSON 1.1 protocol for Sign and GetPublicKey, with real RSA signatures (the first key from the
// key file), and for what a signing-key rotation uses: CreateKey (more RSA keys, with their key
// policy and tags; one may be refused for a while after its creation, as KMS may while its permissions
// apply), PutKeyPolicy, CreateAlias, UpdateAlias, DeleteAlias and ScheduleKeyDeletion (after which the
// key refuses every use); SES's query protocol for SendEmail, delivering into the local outbox folder
// and recording each request's sender and configuration set (SES refuses a configuration set it does
// not have); and CloudFormation's DescribeStacks of one stack (local/cloudformation-stand-in.ts).

export interface AwsStandInsOptions {
  /** PEM file of the RSA private key that "KMS" signs with (the local signing key). */
  signingKeyFile: string;
  /** The outbox folder SendEmail delivers to. */
  outboxDir: string;
  /** The SES configuration sets that exist; SendEmail naming another fails with ConfigurationSetDoesNotExist. */
  configurationSets?: readonly string[];
}

/** What one accepted SendEmail asked for, beside the message the outbox holds. */
export interface SentEmail {
  source: string;
  to: string;
  configurationSet?: string;
}

export interface AwsStandIns {
  url: string;
  /** The ARN of the service's KMS key (from the key file); its last segment is the `kid`. */
  keyArn: string;
  /** Every KMS key the stand-in holds (the first one, then those CreateKey made), with its state, tags, key policy and aliases. */
  kmsKeys(): { arn: string; state: 'Enabled' | 'PendingDeletion'; tags: Record<string, string>; policy?: string; aliases: string[] }[];
  /**
   * From now on a key CreateKey makes is refused (AccessDeniedException) by GetPublicKey and Sign for
   * `seconds` after its creation, as KMS may ("It might take up to five minutes for tag and alias
   * changes to affect KMS key authorization", AWS KMS Developer Guide); 0 lifts every refusal.
   */
  refuseFreshKeys(seconds: number): void;
  /** Makes the next `count` requests of this KMS or SES operation fail with `errorName` (e.g. ThrottlingException). */
  failNext(operation: KmsOperation | 'SendEmail', errorName: string, count?: number): void;
  /** Every SendEmail accepted so far, oldest first. */
  sentEmails(): SentEmail[];
  /** The one stack DescribeStacks knows; set its status to play a deployment, a rollback or a deletion. */
  stack: StandInStack;
  stop(): Promise<void>;
}

type KmsOperation = 'Sign' | 'GetPublicKey' | 'CreateKey' | 'ScheduleKeyDeletion' | 'PutKeyPolicy' | 'CreateAlias' | 'UpdateAlias' | 'DeleteAlias';

interface StandInKey {
  arn: string;
  privateKey: KeyObject;
  state: 'Enabled' | 'PendingDeletion';
  tags: Record<string, string>;
  policy?: string;
  /** When CreateKey made it (epoch ms); undefined for the first key. */
  createdAt?: number;
}

const REGION_ACCOUNT = 'us-east-1:000000000000';

export async function startAwsStandIns(options: AwsStandInsOptions): Promise<AwsStandIns> {
  const first: StandInKey = {
    arn: `arn:aws:kms:${REGION_ACCOUNT}:key/${randomUUID()}`,
    privateKey: createPrivateKey(readFileSync(options.signingKeyFile, 'utf8')),
    state: 'Enabled',
    tags: {},
  };
  const keys = new Map<string, StandInKey>([[first.arn, first]]);
  const aliases = new Map<string, string>();
  const outbox = createOutboxMailer(options.outboxDir);
  const failures = new Map<string, { errorName: string; count: number }>();
  const sent: SentEmail[] = [];
  let refusalSeconds = 0;
  const stack: StandInStack = { stackId: 'arn:aws:cloudformation:us-east-1:000000000000:stack/stand-in-stack/0f0e0d0c', status: 'CREATE_COMPLETE' };

  const failure = (operation: string) => {
    const planned = failures.get(operation);
    if (!planned || planned.count <= 0) return undefined;
    planned.count -= 1;
    return planned.errorName;
  };

  /** A key by id, ARN, alias name or alias ARN, as KMS resolves KeyId. */
  const keyOf = (keyId: unknown): StandInKey | undefined => {
    const id = String(keyId);
    const alias = /^(arn:aws:kms:[^:]+:[^:]+:)?(alias\/.+)$/.exec(id)?.[2];
    const arn = alias ? aliases.get(alias) : id.startsWith('arn:') ? id : `arn:aws:kms:${REGION_ACCOUNT}:key/${id}`;
    return arn === undefined ? undefined : keys.get(arn);
  };

  async function kms(res: ServerResponse, target: string, input: Record<string, unknown>) {
    const operation = target.replace(/^TrentService\./, '');
    const reply = (status: number, body: unknown) => send(res, status, 'application/x-amz-json-1.1', JSON.stringify(body));
    const refuse = (type: string, message: string) => reply(400, { __type: type, message });
    const planned = failure(operation);
    if (planned) return refuse(planned, 'Stand-in failure');
    if (operation === 'CreateKey') {
      if (input.KeySpec !== 'RSA_2048' || input.KeyUsage !== 'SIGN_VERIFY') return refuse('ValidationException', 'Only RSA_2048 SIGN_VERIFY keys are emulated');
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const tags = Object.fromEntries(((input.Tags ?? []) as { TagKey: string; TagValue: string }[]).map((t) => [t.TagKey, t.TagValue]));
      const policy = typeof input.Policy === 'string' ? input.Policy : undefined;
      const key: StandInKey = { arn: `arn:aws:kms:${REGION_ACCOUNT}:key/${randomUUID()}`, privateKey, state: 'Enabled', tags, policy, createdAt: Date.now() };
      keys.set(key.arn, key);
      return reply(200, { KeyMetadata: metadata(key) });
    }
    if (operation === 'CreateAlias' || operation === 'UpdateAlias') {
      const name = String(input.AliasName);
      const key = keyOf(input.TargetKeyId);
      if (!/^alias\/[A-Za-z0-9/_-]+$/.test(name) || name.startsWith('alias/aws/')) return refuse('ValidationException', `Invalid alias name ${name}`);
      if (!key) return refuse('NotFoundException', `Key '${String(input.TargetKeyId)}' does not exist`);
      if (operation === 'CreateAlias' && aliases.has(name)) return refuse('AlreadyExistsException', `Alias ${name} already exists`);
      if (operation === 'UpdateAlias' && !aliases.has(name)) return refuse('NotFoundException', `Alias ${name} does not exist`);
      aliases.set(name, key.arn);
      return reply(200, {});
    }
    if (operation === 'DeleteAlias') {
      const name = String(input.AliasName);
      if (!aliases.delete(name)) return refuse('NotFoundException', `Alias ${name} does not exist`);
      return reply(200, {});
    }
    const key = keyOf(input.KeyId);
    if (!key) return refuse('NotFoundException', `Key '${String(input.KeyId)}' does not exist`);
    if (key.state !== 'Enabled') return refuse('KMSInvalidStateException', `${key.arn} is pending deletion.`);
    if ((operation === 'Sign' || operation === 'GetPublicKey') && key.createdAt !== undefined && Date.now() < key.createdAt + refusalSeconds * 1000) {
      return refuse('AccessDeniedException', `User is not authorized to perform: kms:${operation} on resource: ${key.arn}`);
    }
    if (operation === 'PutKeyPolicy') {
      if (typeof input.Policy !== 'string') return refuse('ValidationException', 'Policy is required');
      key.policy = input.Policy;
      return reply(200, {});
    }
    if (operation === 'ScheduleKeyDeletion') {
      const days = Number(input.PendingWindowInDays ?? 30);
      if (!Number.isInteger(days) || days < 7 || days > 30) return refuse('ValidationException', 'PendingWindowInDays must be 7 to 30');
      key.state = 'PendingDeletion';
      return reply(200, { KeyId: key.arn, KeyState: 'PendingDeletion', PendingWindowInDays: days, DeletionDate: Date.now() / 1000 + days * 86_400 });
    }
    if (operation === 'Sign') {
      if (input.MessageType !== 'RAW' || input.SigningAlgorithm !== 'RSASSA_PKCS1_V1_5_SHA_256' || typeof input.Message !== 'string') {
        return refuse('ValidationException', 'Unsupported signing request');
      }
      const signature = sign('sha256', Buffer.from(input.Message, 'base64'), key.privateKey);
      return reply(200, { KeyId: key.arn, Signature: signature.toString('base64'), SigningAlgorithm: input.SigningAlgorithm });
    }
    if (operation === 'GetPublicKey') {
      const der = createPublicKey(key.privateKey).export({ format: 'der', type: 'spki' });
      return reply(200, {
        KeyId: key.arn, PublicKey: der.toString('base64'), KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY',
        SigningAlgorithms: ['RSASSA_PKCS1_V1_5_SHA_256'],
      });
    }
    return refuse('UnsupportedOperationException', `${operation} is not emulated`);
  }

  function metadata(key: StandInKey) {
    return {
      KeyId: key.arn.split('/').pop(), Arn: key.arn, KeyState: key.state, Enabled: key.state === 'Enabled',
      KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY', SigningAlgorithms: ['RSASSA_PKCS1_V1_5_SHA_256'], CreationDate: Date.now() / 1000,
    };
  }

  async function ses(res: ServerResponse, form: URLSearchParams) {
    const reply = (status: number, body: string) => send(res, status, 'text/xml', body);
    const action = form.get('Action') ?? '';
    const stackAnswer = describeStacks(form, stack);
    if (stackAnswer) return reply(stackAnswer.status, stackAnswer.body);
    const planned = failure(action);
    if (planned) {
      return reply(400, `<ErrorResponse><Error><Type>Sender</Type><Code>${planned}</Code><Message>Stand-in failure</Message></Error></ErrorResponse>`);
    }
    if (action !== 'SendEmail') {
      return reply(400, `<ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction</Code><Message>${escapeXml(action)} is not emulated</Message></Error></ErrorResponse>`);
    }
    const configurationSet = form.get('ConfigurationSetName') ?? undefined;
    if (configurationSet !== undefined && !(options.configurationSets ?? []).includes(configurationSet)) {
      return reply(400, `<ErrorResponse><Error><Type>Sender</Type><Code>ConfigurationSetDoesNotExist</Code><Message>Configuration set &lt;${escapeXml(configurationSet)}&gt; does not exist.</Message></Error></ErrorResponse>`);
    }
    const to = form.get('Destination.ToAddresses.member.1') ?? '';
    sent.push({ source: form.get('Source') ?? '', to, ...(configurationSet === undefined ? {} : { configurationSet }) });
    await outbox.send({
      to,
      subject: form.get('Message.Subject.Data') ?? '',
      text: form.get('Message.Body.Text.Data') ?? '',
    });
    return reply(200, `<SendEmailResponse xmlns="http://ses.amazonaws.com/doc/2010-12-01/"><SendEmailResult><MessageId>${randomUUID()}</MessageId></SendEmailResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></SendEmailResponse>`);
  }

  const server: Server = createServer((req, res) => {
    (async () => {
      const body = await readBody(req);
      const target = req.headers['x-amz-target'];
      if (typeof target === 'string') await kms(res, target, JSON.parse(body || '{}') as Record<string, unknown>);
      else await ses(res, new URLSearchParams(body));
    })().catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, 'application/json', JSON.stringify({ __type: 'InternalFailure', message: String(error) }));
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolveListen());
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    keyArn: first.arn,
    kmsKeys: () => [...keys.values()].map(({ arn, state, tags, policy }) => ({
      arn, state, tags: { ...tags }, ...(policy === undefined ? {} : { policy }), aliases: [...aliases].filter(([, target]) => target === arn).map(([name]) => name),
    })),
    refuseFreshKeys(seconds) {
      refusalSeconds = seconds;
    },
    failNext(operation, errorName, count = 1) {
      failures.set(operation, { errorName, count });
    },
    sentEmails: () => sent.map((email) => ({ ...email })),
    stack,
    stop: () => new Promise((resolveClose) => {
      server.close(() => resolveClose());
      server.closeAllConnections();
    }),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, contentType: string, body: string) {
  res.writeHead(status, { 'content-type': contentType, 'x-amzn-requestid': randomUUID() });
  res.end(body);
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

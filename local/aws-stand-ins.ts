import { createPrivateKey, createPublicKey, randomUUID, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createOutboxMailer } from '#shared/email/outbox-mailer';

// KMS and SES have no local engine. These stand-ins speak their wire protocols on loopback, so the
// service's real SDK clients (with their middleware, timeouts and retries) run unchanged against them:
// KMS's JSON 1.1 protocol for Sign and GetPublicKey, with real RSA signatures from a key file, and
// SES's query protocol for SendEmail, delivering into the local outbox folder and recording each
// request's sender and configuration set (SES refuses a configuration set it does not have).

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
  /** The ARN of the one KMS key; its last segment is the `kid`. */
  keyArn: string;
  /** Makes the next `count` requests of this KMS or SES operation fail with `errorName` (e.g. ThrottlingException). */
  failNext(operation: 'Sign' | 'GetPublicKey' | 'SendEmail', errorName: string, count?: number): void;
  /** Every SendEmail accepted so far, oldest first. */
  sentEmails(): SentEmail[];
  stop(): Promise<void>;
}

export async function startAwsStandIns(options: AwsStandInsOptions): Promise<AwsStandIns> {
  const privateKey = createPrivateKey(readFileSync(options.signingKeyFile, 'utf8'));
  const keyArn = `arn:aws:kms:us-east-1:000000000000:key/${randomUUID()}`;
  const outbox = createOutboxMailer(options.outboxDir);
  const failures = new Map<string, { errorName: string; count: number }>();
  const sent: SentEmail[] = [];

  const failure = (operation: string) => {
    const planned = failures.get(operation);
    if (!planned || planned.count <= 0) return undefined;
    planned.count -= 1;
    return planned.errorName;
  };

  async function kms(res: ServerResponse, target: string, input: Record<string, unknown>) {
    const operation = target.replace(/^TrentService\./, '');
    const reply = (status: number, body: unknown) => send(res, status, 'application/x-amz-json-1.1', JSON.stringify(body));
    const planned = failure(operation);
    if (planned) return reply(400, { __type: planned, message: 'Stand-in failure' });
    if (input.KeyId !== keyArn && input.KeyId !== keyArn.split('/').pop()) {
      return reply(400, { __type: 'NotFoundException', message: `Key '${String(input.KeyId)}' does not exist` });
    }
    if (operation === 'Sign') {
      if (input.MessageType !== 'RAW' || input.SigningAlgorithm !== 'RSASSA_PKCS1_V1_5_SHA_256' || typeof input.Message !== 'string') {
        return reply(400, { __type: 'ValidationException', message: 'Unsupported signing request' });
      }
      const signature = sign('sha256', Buffer.from(input.Message, 'base64'), privateKey);
      return reply(200, { KeyId: keyArn, Signature: signature.toString('base64'), SigningAlgorithm: input.SigningAlgorithm });
    }
    if (operation === 'GetPublicKey') {
      const der = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
      return reply(200, {
        KeyId: keyArn, PublicKey: der.toString('base64'), KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY',
        SigningAlgorithms: ['RSASSA_PKCS1_V1_5_SHA_256'],
      });
    }
    return reply(400, { __type: 'UnsupportedOperationException', message: `${operation} is not emulated` });
  }

  async function ses(res: ServerResponse, form: URLSearchParams) {
    const reply = (status: number, body: string) => send(res, status, 'text/xml', body);
    const action = form.get('Action') ?? '';
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
    keyArn,
    failNext(operation, errorName, count = 1) {
      failures.set(operation, { errorName, count });
    },
    sentEmails: () => sent.map((email) => ({ ...email })),
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

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SendEmailCommand, SESClient } from '@aws-sdk/client-ses';
import { runAsFunction } from '#local/invocation-context';
import { LOCAL_CONFIGURATION_SET, type LocalService } from '#local/service';
import { SIGNING_KEY_TAG_KEY } from '#shared/auth/kms-keys';
import { KEY_SCHEDULE_CACHE_SECONDS, PUBLISH_LEAD_SECONDS, RETIRE_AFTER_SUCCESSOR_SECONDS } from '#shared/auth/signing-keys';
import { ENV } from '#shared/config';
import { FUNCTIONS } from '#shared/routes';
import { AWS_CALL_LIMITS } from '#shared/aws/client-config';
import { readOutbox } from '#shared/email/outbox-mailer';
import { DEMO_CLIENT } from '#local/seed';
import { Browser, formFields, obtainCode } from '../support/oauth-client';
import { startTestService } from '../support/service';

// The service as it runs in AWS: tokens signed by "KMS" and mail sent through "SES", each through
// the real SDK client (its serializer, middleware, timeouts and retries) against loopback stand-ins.
// These are the scenarios in which the IAM test sees kms:Sign, kms:GetPublicKey and ses:SendEmail,
// and the rotation function's KMS calls (CreateKey, CreateAlias, UpdateAlias, ScheduleKeyDeletion).
describe('the service on KMS and SES (stand-ins)', () => {
  let service: LocalService;
  const credentials = { client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret };

  beforeAll(async () => {
    service = await startTestService({ awsStandIns: true });
  });

  afterAll(async () => {
    await service?.stop();
  });

  const token = (fields: Record<string, string>) => fetch(`${service.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...credentials, ...fields }),
  });

  it('signs access tokens with kms:Sign, publishes the KMS public key, and the API accepts the tokens', async () => {
    const { code, redirectUri } = await obtainCode(new Browser(service.authUrl));
    const exchanged = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
    expect(exchanged.status).toBe(200);
    const first = await exchanged.json() as { access_token: string; refresh_token: string };

    const jwks = await (await fetch(`${service.authUrl}/.well-known/jwks.json`)).json() as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toEqual([service.aws!.keyArn.split('/').pop()]);
    const header = JSON.parse(Buffer.from(first.access_token.split('.')[0]!, 'base64url').toString()) as { kid: string };
    expect(header.kid).toBe(jwks.keys[0]!.kid);

    const devices = await fetch(`${service.apiUrl}/devices`, { headers: { authorization: `Bearer ${first.access_token}` } });
    expect(devices.status).toBe(200);

    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(refreshed.status).toBe(200);
  });

  it('answers 503 with Retry-After while KMS throttles, and the same code then exchanges', async () => {
    const { code, redirectUri } = await obtainCode(new Browser(service.authUrl));
    // Every attempt the SDK makes (AWS_CALL_LIMITS.maxAttempts) is throttled.
    service.aws!.failNext('Sign', 'ThrottlingException', AWS_CALL_LIMITS.maxAttempts);
    const throttled = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
    expect(throttled.status).toBe(503);
    expect(throttled.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await throttled.json()).toMatchObject({ error: 'temporarily_unavailable' });

    const retried = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
    expect(retried.status).toBe(200);
  });

  it('sends sign-up, confirmation and reset mail with ses:SendEmail, delivered to the outbox', async () => {
    const browser = new Browser(service.authUrl);
    const email = `ses-${Date.now()}@example.com`;
    const password = 'a quiet lighthouse keeps the harbour';
    const form = await browser.get('/signup');
    const signup = await browser.postForm('/signup', {
      ...formFields(form.text, '/signup'), firstname: 'Ada', lastname: 'Lovelace', email, password, gender: '2',
    });
    expect(signup.status).toBe(303);

    const login = await browser.get('/login');
    expect((await browser.postForm('/login', { ...formFields(login.text, '/login'), email, password })).status).toBe(303);
    const account = await browser.get('/account');
    const resend = await browser.postForm('/confirm-email/resend', formFields(account.text, '/confirm-email/resend'));
    expect(resend.status).toBeLessThan(400);

    const resetForm = await browser.get('/password-reset');
    const reset = await browser.postForm('/password-reset', { ...formFields(resetForm.text, '/password-reset'), email });
    expect(reset.status).toBeLessThan(400);

    const subjects = (await readOutbox(service.outboxDir)).filter((m) => m.to === email).map((m) => m.subject);
    expect(subjects).toHaveLength(3);
    // Each with the configuration set that counts bounces and complaints and suppresses their addresses.
    expect(service.aws!.sentEmails().filter((m) => m.to === email)).toEqual(Array(3).fill({
      source: 'no-reply@localhost', to: email, configurationSet: LOCAL_CONFIGURATION_SET,
    }));
  });

  it('refuses, as SES does, a SendEmail naming a configuration set it does not have', async () => {
    const ses = new SESClient({ endpoint: service.aws!.url, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const send = (ConfigurationSetName?: string) => ses.send(new SendEmailCommand({
      Source: 'no-reply@localhost', Destination: { ToAddresses: ['nobody@example.com'] },
      Message: { Subject: { Data: 'x' }, Body: { Text: { Data: 'y' } } }, ...(ConfigurationSetName ? { ConfigurationSetName } : {}),
    }));
    try {
      await expect(send('no-such-set')).rejects.toMatchObject({ name: 'ConfigurationSetDoesNotExistException' });
      await expect(send(LOCAL_CONFIGURATION_SET)).resolves.toMatchObject({ MessageId: expect.any(String) });
    } finally {
      ses.destroy();
    }
  });

  // Last: it moves this process's clock (the service runs in it) through two rotations.
  it('rotates the signing key in KMS: the rotation function creates tagged keys, points the aliases, and schedules retired keys for deletion', async () => {
    const schedule = FUNCTIONS['rotate-signing-key'].schedule;
    Object.assign(process.env, { [ENV.signingKeyTag]: 'stand-in-stack', [ENV.signingKeyAliasPrefix]: 'alias/stand-in-stack-signing' });
    const { handler } = await import('#functions/ops/rotate-signing-key');
    // As its EventBridge rule invokes it, so that its KMS and DynamoDB calls are checked against its role.
    const rotate = (mode: 'now' | 'when-due') => runAsFunction({ fn: 'rotate-signing-key', api: 'schedule', routeKey: schedule }, () => handler({ mode }));
    let now = Math.floor(Date.now() / 1000) * 1000;
    const pass = (seconds: number) => vi.setSystemTime((now += seconds * 1000));
    pass(0);
    const kms = () => service.aws!.kmsKeys();
    const flow = async () => {
      const { code, redirectUri } = await obtainCode(new Browser(service.authUrl));
      const exchanged = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
      expect(exchanged.status).toBe(200);
      const { access_token: accessToken } = await exchanged.json() as { access_token: string };
      expect((await fetch(`${service.apiUrl}/devices`, { headers: { authorization: `Bearer ${accessToken}` } })).status).toBe(200);
      return (JSON.parse(Buffer.from(accessToken.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;
    };
    const jwksKids = async () => ((await (await fetch(`${service.authUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    const stackKey = service.aws!.keyArn;
    const kid = (arn: string) => arn.split('/').pop()!;

    try {
      // Introduce: a new KMS key with the stack's tag, published, not signing yet.
      const first = await rotate('now');
      const second = kms().find((k) => k.arn !== stackKey)!;
      expect(first.introduced).toBe(kid(second.arn));
      expect(second.tags).toEqual({ [SIGNING_KEY_TAG_KEY]: 'stand-in-stack' });
      expect(kms().find((k) => k.arn === stackKey)!.aliases).toEqual(['alias/stand-in-stack-signing-current']);
      expect(second.aliases).toEqual(['alias/stand-in-stack-signing-next']);
      pass(KEY_SCHEDULE_CACHE_SECONDS);
      expect(await jwksKids()).toEqual([kid(stackKey), kid(second.arn)]);
      expect(await flow()).toBe(kid(stackKey));

      // Switch: the new key signs (kms:Sign on it), its public key is published (kms:GetPublicKey on it).
      pass(PUBLISH_LEAD_SECONDS);
      expect(await flow()).toBe(kid(second.arn));
      expect((await rotate('when-due')).introduced).toBeNull();
      expect(kms().find((k) => k.arn === second.arn)!.aliases.sort()).toEqual(['alias/stand-in-stack-signing-current', 'alias/stand-in-stack-signing-next']);

      // A second rotation retires the rotated key; the step after its retirement schedules its deletion.
      const third = await rotate('now');
      pass(PUBLISH_LEAD_SECONDS + RETIRE_AFTER_SUCCESSOR_SECONDS);
      expect(await flow()).toBe(third.introduced);
      const cleanup = await rotate('when-due');
      expect(cleanup.deleted).toEqual([kid(second.arn)]);
      expect(kms().map((k) => [kid(k.arn), k.state])).toEqual([
        [kid(stackKey), 'Enabled'], [kid(second.arn), 'PendingDeletion'], [third.introduced, 'Enabled'],
      ]);
      expect(kms().find((k) => kid(k.arn) === third.introduced)!.aliases.sort())
        .toEqual(['alias/stand-in-stack-signing-current', 'alias/stand-in-stack-signing-next']);
      pass(KEY_SCHEDULE_CACHE_SECONDS);
      expect(await jwksKids()).toEqual([third.introduced]);
      expect(await flow()).toBe(third.introduced);
    } finally {
      vi.useRealTimers();
    }
  });
});

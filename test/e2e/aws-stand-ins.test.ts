import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { SendEmailCommand, SESClient } from '@aws-sdk/client-ses';
import { runAsFunction } from '#local/invocation-context';
import { LOCAL_CONFIGURATION_SET } from '#local/service';
import { KEY_SCHEDULE_CACHE_SECONDS, PUBLISH_LEAD_SECONDS, RETIRE_AFTER_SUCCESSOR_SECONDS } from '#shared/keys/schedule';
import { ENV } from '#shared/config';
import { endpointOf } from '#functions/registry';
import { AWS_CALL_LIMITS } from '#shared/aws/client-config';
import { readOutbox } from '#shared/email/outbox-mailer';
import { DEMO_CLIENT } from '#local/seed';
import { catchCloudFormationResponses } from '../support/cloudformation-response';
import { Browser, createAccount, formFields, obtainCode, signIn } from '../support/oauth-client';
import { SoftwarePasskey } from '../support/software-passkey';
import { base32 } from '@otplib/plugin-base32-scure';
import { crypto } from '@otplib/plugin-crypto-node';
import { generateSync } from '@otplib/totp';
import { enrolAuthenticator } from '#shared/accounts/second-factor';
import { newTotpSecret } from '#shared/accounts/totp';
import { createFactorRepo } from '#shared/data/factor-repo';
import { createPasskeyRepo } from '#shared/data/passkey-repo';
import { useTestService } from '../support/service';

// The service as it runs in AWS: tokens signed by "KMS" and mail sent through "SES", each through
// the real SDK client (its serializer, middleware, timeouts and retries) against loopback stand-ins.
// These are the scenarios in which the IAM test sees kms:Sign, kms:GetPublicKey and ses:SendEmail,
// and the rotation function's calls (CreateKey, GetPublicKey, CreateAlias, UpdateAlias, DeleteAlias,
// PutKeyPolicy, ScheduleKeyDeletion, and CloudFormation's DescribeStacks of its own stack), at
// deployment, in rotations, in a rollback and at the stack's deletion.
describe('the service on KMS and SES (stand-ins)', () => {
  const service = useTestService({ awsStandIns: true });
  const credentials = { client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret };

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

  it('sends sign-up, confirmation, reset and account-deletion mail with ses:SendEmail, delivered to the outbox', async () => {
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

    const deletePage = await browser.get('/account/delete');
    const deleted = await browser.postForm('/account/delete', { ...formFields(deletePage.text, '/account/delete'), password });
    expect(deleted.status).toBe(303);

    const subjects = (await readOutbox(service.outboxDir)).filter((m) => m.to === email).map((m) => m.subject);
    expect(subjects).toHaveLength(4);
    expect(subjects).toContain('Your account has been deleted');
    // Each with the configuration set that counts bounces and complaints and suppresses their addresses.
    expect(service.aws!.sentEmails().filter((m) => m.to === email)).toEqual(Array(4).fill({
      source: 'no-reply@localhost', to: email, configurationSet: LOCAL_CONFIGURATION_SET,
    }));
  });

  it('sends a new browser’s sign-in alert with ses:SendEmail, whichever way it signed in (password, second step, passkey)', async () => {
    const { doc } = await import('#shared/runtime');
    const table = { doc, table: service.tableName };
    const account = await createAccount(service);
    expect((await signIn(new Browser(service.authUrl), account)).status).toBe(303); // the first sign-in: no alert
    expect((await signIn(new Browser(service.authUrl), account)).status).toBe(303); // a new browser: the alert from POST /login

    const t = Date.now();
    vi.setSystemTime(t);
    try {
      const factors = createFactorRepo(table);
      const secret = newTotpSecret();
      const code = (at: number) => generateSync({ secret, crypto, base32, epoch: Math.floor(at / 1000) });
      await factors.startTotpEnrolment(account.user.id, secret, new Date(t));
      expect((await enrolAuthenticator(factors, account.user.id, secret, code(t), t)).outcome).toBe('enrolled');
      vi.setSystemTime(t + 30_000);
      const b = new Browser(service.authUrl);
      const password = await signIn(b, account);
      const codePage = await b.get(password.location!);
      expect((await b.postForm('/login/second-factor', { ...formFields(codePage.text, '/login/second-factor'), code: code(t + 30_000) })).status).toBe(303);

      const passkey = new SoftwarePasskey(account.user.id);
      expect(await createPasskeyRepo(table).addPasskey(account.user.id, passkey.stored())).toBe('added');
      const p = new Browser(service.authUrl);
      const fields = formFields((await p.get('/login')).text, '/login/passkey');
      const options = JSON.parse((await p.postForm('/login/passkey/options', { csrf: fields.csrf! })).text) as { challenge: string; rpId: string };
      expect((await p.postForm('/login/passkey', { ...fields, response: passkey.answer(options.challenge, service.authUrl, options.rpId) })).status).toBe(303);
    } finally {
      vi.useRealTimers();
    }

    const alerts = service.aws!.sentEmails().filter((m) => m.to === account.user.email);
    expect(alerts).toHaveLength(3);
    expect((await readOutbox(service.outboxDir)).filter((m) => m.to === account.user.email).map((m) => m.subject)).toEqual(Array(3).fill('New sign-in to your account'));
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
  it('keeps the signing keys in KMS through a stack\'s life: recorded at deployment, rotated (a key published once KMS gives its public key), torn down with the stack', async () => {
    const schedule = endpointOf('rotate-signing-key').schedule!;
    const keyPolicy = { Version: '2012-10-17', Statement: [{ Sid: 'StandIn', Effect: 'Allow', Principal: { AWS: 'arn:aws:iam::000000000000:root' }, Action: 'kms:*', Resource: '*' }] };
    const stack = service.aws!.stack;
    Object.assign(process.env, {
      [ENV.signingKeyTag]: 'stand-in-stack/0f0e0d0c', [ENV.signingKeyAliasPrefix]: 'alias/stand-in-stack-signing', [ENV.signingKeyPolicy]: JSON.stringify(keyPolicy),
      [ENV.signingKeyStackId]: stack.stackId,
    });
    const { handler } = await import('#functions/ops/rotate-signing-key');
    // As its EventBridge rule (and CloudFormation) invoke it, so that its KMS and DynamoDB calls are checked against its role.
    const asRotation = <T>(work: () => Promise<T>) => runAsFunction({ fn: 'rotate-signing-key', api: 'schedule', routeKey: schedule }, work);
    const rotate = (mode: 'now' | 'when-due') => asRotation(() => handler({ mode }));
    const cloudFormation = await catchCloudFormationResponses();
    const lifecycle = (RequestType: 'Create' | 'Update' | 'Delete') => asRotation(() => handler({
      RequestType, ResponseURL: cloudFormation.url, RequestId: randomUUID(), LogicalResourceId: 'SigningKeyLifecycle',
      StackId: stack.stackId, ResourceProperties: { TeardownOnDelete: 'true', RotatedKeyPolicy: JSON.stringify(keyPolicy) },
      ...(RequestType === 'Create' ? {} : { PhysicalResourceId: 'signing-keys-0f0e0d0c' }),
    }));
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
    const jwks = async () => {
      const response = await fetch(`${service.authUrl}/.well-known/jwks.json`);
      expect(response.status).toBe(200);
      return ((await response.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    };
    const stackKey = service.aws!.keyArn;
    const kid = (arn: string) => arn.split('/').pop()!;
    const aliases = { current: 'alias/stand-in-stack-signing-current', next: 'alias/stand-in-stack-signing-next' };

    try {
      // Deployment: the stack's key is recorded (its public key read once) and named `-current`; the first hourly run changes nothing.
      expect((await lifecycle('Create'))!.Status).toBe('SUCCESS');
      expect(kms()).toEqual([expect.objectContaining({ arn: stackKey, aliases: [aliases.current] })]);
      expect((await rotate('when-due')).introduced).toBeNull();
      expect(kms()).toHaveLength(1);

      // Introduce while KMS refuses the new key for its first five minutes: created with the stack's key
      // policy and no tags, not published; the JWKS answers the keys it has.
      service.aws!.refuseFreshKeys(300);
      const refused = await rotate('now');
      const second = kms().find((k) => k.arn !== stackKey)!;
      expect(refused).toMatchObject({ introduced: null, awaitingPublication: kid(second.arn) });
      expect(second.tags).toEqual({});
      expect(JSON.parse(second.policy!)).toEqual(keyPolicy);
      pass(KEY_SCHEDULE_CACHE_SECONDS);
      expect(await jwks()).toEqual([kid(stackKey)]);
      expect(await flow()).toBe(kid(stackKey));

      // The next hourly run finds its public key readable and publishes it: not signing yet.
      pass(3600);
      expect((await rotate('when-due')).introduced).toBe(kid(second.arn));
      expect(kms().find((k) => k.arn === stackKey)!.aliases).toEqual([aliases.current]);
      expect(kms().find((k) => k.arn === second.arn)!.aliases).toEqual([aliases.next]);
      pass(KEY_SCHEDULE_CACHE_SECONDS);
      expect(await jwks()).toEqual([kid(stackKey), kid(second.arn)]);
      expect(await flow()).toBe(kid(stackKey));

      // Switch: the new key signs (kms:Sign on it, allowed by its key policy); the JWKS reads no public key of KMS.
      pass(PUBLISH_LEAD_SECONDS);
      expect(await flow()).toBe(kid(second.arn));
      expect((await rotate('when-due')).introduced).toBeNull();
      expect(kms().find((k) => k.arn === second.arn)!.aliases.sort()).toEqual([aliases.current, aliases.next]);

      // A second rotation retires the rotated key; the step after its retirement schedules its deletion.
      service.aws!.refuseFreshKeys(0);
      const third = await rotate('now');
      pass(PUBLISH_LEAD_SECONDS + RETIRE_AFTER_SUCCESSOR_SECONDS);
      expect(await flow()).toBe(third.introduced);
      const cleanup = await rotate('when-due');
      expect(cleanup.deleted).toEqual([kid(second.arn)]);
      expect(kms().map((k) => [kid(k.arn), k.state])).toEqual([
        [kid(stackKey), 'Enabled'], [kid(second.arn), 'PendingDeletion'], [third.introduced, 'Enabled'],
      ]);
      pass(KEY_SCHEDULE_CACHE_SECONDS);
      expect(await jwks()).toEqual([third.introduced]);
      expect(await flow()).toBe(third.introduced);

      // A later deployment puts the rotated keys' policy on them again (kms:PutKeyPolicy); an update
      // that rolls back sends a Delete, which reads the stack's status and keeps everything.
      const beforeRollback = kms();
      stack.status = 'UPDATE_IN_PROGRESS';
      expect((await lifecycle('Update'))!.Status).toBe('SUCCESS');
      stack.status = 'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS';
      expect((await lifecycle('Delete'))!.Status).toBe('SUCCESS');
      expect(kms()).toEqual(beforeRollback);
      expect(await flow()).toBe(third.introduced);

      // The stack's deletion (a dev stage): every key a rotation created is scheduled for deletion, the aliases go.
      stack.status = 'DELETE_IN_PROGRESS';
      expect((await lifecycle('Delete'))!.Status).toBe('SUCCESS');
      expect(kms().map((k) => [kid(k.arn), k.state, k.aliases])).toEqual([
        [kid(stackKey), 'Enabled', []], [kid(second.arn), 'PendingDeletion', []], [third.introduced, 'PendingDeletion', []],
      ]);
      expect(cloudFormation.responses.map((r) => r.body.Status)).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS', 'SUCCESS']);
    } finally {
      vi.useRealTimers();
      await cloudFormation.stop();
    }
  });
});

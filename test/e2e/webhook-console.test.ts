import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClientRepo } from '#shared/data/client-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { Browser, formFields, textOf, type Reply, newDeveloperApp } from '../support/oauth-client';
import { useTable, useTestService } from '../support/service';

/** The webhook card of the developer console over HTTP: forms, their errors, show-once secrets, deliveries. */
describe('webhook in the developer console over HTTP', () => {
  const service = useTestService({ webhooks: {} });
  const { doc } = useTable(service);
  const webhooks = createWebhookRepo({ doc, table: service.tableName });
  /** A receiver on this machine (the local service accepts http://localhost): what it was sent. */
  let receiver: Server;
  let receiverUrl: string;
  const received: { headers: Record<string, string>; body: string }[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://localhost:${(receiver.address() as { port: number }).port}/hooks`;
  });

  afterAll(async () => {
    await new Promise((resolve) => receiver?.close(resolve));
  });

  /** The requests the receiver got for `webhookId`, once there are `count` (within 5 s). */
  async function receivedFor(webhookId: string, count: number) {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const mine = received.filter((r) => r.headers['webhook-id'] === webhookId);
      if (mine.length >= count || Date.now() > deadline) return mine;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const developerWithApp = () => newDeveloperApp(service, 'Webhook app');

  /** Posts the application page's form to `action` with `fields`. */
  async function post(b: Browser, appPath: string, action: string, fields: Record<string, string> = {}): Promise<Reply> {
    const page = await b.get(appPath);
    expect(page.status).toBe(200);
    return b.postForm(action, { ...formFields(page.text, action), ...fields });
  }

  const secretOn = (reply: Reply) => /id="webhook-signing-secret">(whsec_[A-Za-z0-9+/=]+)</.exec(reply.text)?.[1];

  it('refuses unsafe or malformed URLs with the reason on the form, storing nothing', async () => {
    const { b, clientId, appPath } = await developerWithApp();
    const hook = `${appPath}/webhook`;
    for (const [url, reason] of [
      ['http://169.254.169.254/', 'must start with https://'],
      ['https://169.254.169.254/latest/meta-data', 'public Internet address'],
      ['https://127.0.0.1/hook', 'public Internet address'],
      ['https://10.0.0.1/hook', 'public Internet address'],
      ['https://[::1]/hook', 'public Internet address'],
      ['not a url', 'not a valid URL'],
      ['', 'Enter the URL'],
    ] as const) {
      const reply = await post(b, appPath, hook, { webhook_url: url });
      expect(reply.status, url).toBe(400);
      expect(textOf(/<p class="error" id="webhook_url-error">([\s\S]*?)<\/p>/.exec(reply.text)?.[1] ?? ''), url).toContain(reason);
      expect(reply.text).toContain('aria-invalid="true"');
    }
    expect(await webhooks.getSubscription(clientId)).toBeUndefined();
  });

  it('registers the URL, shows the signing secret once, rotates it with an overlap, and removes it when confirmed', async () => {
    const { b, clientId, appPath } = await developerWithApp();
    const registered = await post(b, appPath, `${appPath}/webhook`, { webhook_url: 'http://localhost:9/hooks' });
    expect(registered).toMatchObject({ status: 303, location: `${appPath}/secret`, text: '' });
    const shown = await b.get(registered.location!);
    expect(shown.text).toContain('Webhook registered');
    const first = secretOn(shown);
    const stored = await webhooks.getSubscription(clientId);
    expect(stored).toMatchObject({ url: 'http://localhost:9/hooks', secrets: [{ secret: first }] });
    // Shown once: a reload does not show it again.
    const again = await b.get(registered.location!);
    expect(secretOn(again)).toBeUndefined();
    expect(again.text).not.toContain(first!);

    // The application page shows the URL, and never the secret.
    const page = await b.get(appPath);
    expect(page.text).toContain('value="http://localhost:9/hooks"');
    expect(page.text).not.toContain(first!);

    // A changed URL keeps the secret.
    const changed = await post(b, appPath, `${appPath}/webhook`, { webhook_url: 'http://127.0.0.1:9/other' });
    expect(changed).toMatchObject({ status: 303, location: `${appPath}?done=webhook-saved#webhook` });
    expect((await webhooks.getSubscription(clientId))?.secrets.map((s) => s.secret)).toEqual([first]);

    // Rotation needs the box ticked; then both secrets sign, the previous one for 24 hours.
    const unconfirmed = await post(b, appPath, `${appPath}/webhook/secret`);
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.text).toContain('Tick the box to confirm that you want a new signing secret.');
    expect((await webhooks.getSubscription(clientId))?.secrets).toHaveLength(1);
    const rotated = await post(b, appPath, `${appPath}/webhook/secret`, { confirm: 'yes' });
    expect(rotated).toMatchObject({ status: 303, location: `${appPath}/secret` });
    const second = secretOn(await b.get(rotated.location!));
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    const { secrets } = (await webhooks.getSubscription(clientId))!;
    expect(secrets.map((s) => s.secret)).toEqual([second, first]);
    expect(secrets[1]!.retiresAt! - Date.now() / 1000).toBeGreaterThan(24 * 3600 - 60);
    expect((await b.get(appPath)).text).toContain('The previous secret also signs every delivery until');

    // Removal needs the box ticked too.
    expect((await post(b, appPath, `${appPath}/webhook/delete`)).status).toBe(400);
    expect(await webhooks.getSubscription(clientId)).toBeDefined();
    const removed = await post(b, appPath, `${appPath}/webhook/delete`, { confirm: 'yes' });
    expect(removed).toMatchObject({ status: 303, location: `${appPath}?done=webhook-removed#webhook` });
    expect(await webhooks.getSubscription(clientId)).toBeUndefined();
    expect((await b.get(appPath)).text).toContain('Register webhook');
  });

  it('sends a test event, lists it among the deliveries, and sends it again with the same webhook-id', async () => {
    const { b, clientId, appPath } = await developerWithApp();
    // Without a URL there is nothing to test.
    const early = await b.postForm(`${appPath}/webhook/test`, formFields((await b.get(appPath)).text, `${appPath}/webhook`));
    expect(early.status).toBe(400);
    expect(early.text).toContain('Register a webhook URL first.');

    const registered = await post(b, appPath, `${appPath}/webhook`, { webhook_url: receiverUrl });
    const secret = secretOn(await b.get(registered.location!))!;
    const sent = await post(b, appPath, `${appPath}/webhook/test`);
    expect(sent).toMatchObject({ status: 303, location: `${appPath}?done=webhook-test-sent#webhook` });
    const [delivery] = await webhooks.listDeliveries(clientId);
    expect(delivery).toMatchObject({ eventType: 'webhook.test' });
    const [first] = await receivedFor(delivery!.webhookId, 1);
    // Signed with the secret the console showed once.
    expect(new Webhook(secret).verify(first!.body, first!.headers)).toMatchObject({ type: 'webhook.test', data: { client_id: clientId } });

    await expect.poll(async () => (await webhooks.getDelivery(clientId, delivery!.webhookId))?.status).toBe('delivered');
    const page = await b.get(`${appPath}?done=webhook-test-sent`);
    expect(page.text).toContain('A webhook.test event is on its way');
    const row = /<table class="deliveries"[\s\S]*?<\/table>/.exec(page.text)![0];
    expect(textOf(row)).toMatch(/webhook\.test \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    expect(textOf(row)).toMatch(/Delivered \(HTTP 204\) 1 attempt · \d+ ms/);

    const resendPath = `${appPath}/webhook/deliveries/${delivery!.webhookId}`;
    const resent = await b.postForm(resendPath, formFields(page.text, resendPath));
    expect(resent).toMatchObject({ status: 303, location: `${appPath}?done=webhook-resent#webhook` });
    const both = await receivedFor(delivery!.webhookId, 2);
    expect(both).toHaveLength(2);
    expect(both[1]!.body).toBe(first!.body);
    expect(new Webhook(secret).verify(both[1]!.body, both[1]!.headers)).toBeTruthy();

    // An id that is no delivery of this application is 404, and nothing is sent.
    const count = received.length;
    const unknown = await b.postForm(`${appPath}/webhook/deliveries/msg_000000000_00000000000000000000`, formFields(page.text, resendPath));
    expect(unknown.status).toBe(404);
    expect(received.length).toBe(count);
  });

  it('a refused application form (details, secret rotation) shows the page again with the webhook and its deliveries', async () => {
    // Prepare: an application with a webhook and one delivery
    const { b, clientId, appPath } = await developerWithApp();
    await post(b, appPath, `${appPath}/webhook`, { webhook_url: receiverUrl });
    await post(b, appPath, `${appPath}/webhook/test`);
    await expect.poll(async () => (await webhooks.listDeliveries(clientId)).length).toBe(1);

    // Act: an empty name, and a rotation without its confirmation
    const renamed = await post(b, appPath, appPath, { name: '' });
    const rotated = await post(b, appPath, `${appPath}/secret`);

    // Assess: both refused, each page still lists the delivery
    for (const reply of [renamed, rotated]) {
      expect(reply.status).toBe(400);
      expect(textOf(/<table class="deliveries"[\s\S]*?<\/table>/.exec(reply.text)![0])).toMatch(/webhook\.test/);
    }
  });

  it('removes the webhook, signing secrets included, with the application', async () => {
    const { b, clientId, appPath } = await developerWithApp();
    await post(b, appPath, `${appPath}/webhook`, { webhook_url: 'http://localhost:9/hooks' });
    expect(await webhooks.getSubscription(clientId)).toBeDefined();
    const deleted = await b.postForm(`${appPath}/delete`, { ...formFields((await b.get(`${appPath}/delete`)).text, `${appPath}/delete`), confirm_name: 'Webhook app' });
    expect(deleted).toMatchObject({ status: 303, location: '/developer' });
    expect(await webhooks.getSubscription(clientId)).toBeUndefined();
  });

  it("answers 404 for another developer's application and a missing CSRF token with 403, changing nothing", async () => {
    const owner = await developerWithApp();
    await post(owner.b, owner.appPath, `${owner.appPath}/webhook`, { webhook_url: 'http://localhost:9/hooks' });
    const before = await webhooks.getSubscription(owner.clientId);
    const other = await developerWithApp();
    const otherFields = formFields((await other.b.get(other.appPath)).text, `${other.appPath}/webhook`);
    for (const [action, fields] of [
      ['/webhook', { webhook_url: 'http://localhost:9/evil' }], ['/webhook/secret', { confirm: 'yes' }], ['/webhook/delete', { confirm: 'yes' }],
      ['/webhook/test', {}],
    ] as const) {
      const reply = await other.b.postForm(`${owner.appPath}${action}`, { ...otherFields, ...fields });
      expect(reply.status, action).toBe(404);
      const forged = await owner.b.postForm(`${owner.appPath}${action}`, fields);
      expect(forged.status, action).toBe(403);
    }
    expect(await webhooks.getSubscription(owner.clientId)).toEqual(before);
    expect((await other.b.get(owner.appPath)).status).toBe(404);
    // The client secret pages still work as before: no webhook reveal shows there.
    expect(await createClientRepo({ doc, table: service.tableName }).getClient(owner.clientId)).toBeDefined();
  });
});

import { describe, expect, it } from 'vitest';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { Browser, formFields, type Reply, newDeveloperApp } from '../support/oauth-client';
import { useTable, useTestService } from '../support/service';

/** Malformed input, SSRF spellings, another developer's application and CSRF on the webhook forms (a security review's probes). */
describe('webhook forms under attack', () => {
  const service = useTestService({ webhooks: {} });
  const { doc } = useTable(service);
  const webhooks = createWebhookRepo({ doc, table: service.tableName });

  const developerWithApp = () => newDeveloperApp(service, 'Probe app');
  async function post(b: Browser, formPage: string, action: string, fields: Record<string, string> = {}): Promise<Reply> {
    const page = await b.get(formPage);
    expect(page.status).toBe(200);
    return b.postForm(action, { ...formFields(page.text, action), ...fields });
  }

  it('refuses SSRF spellings and malformed URLs with a 400, storing nothing', async () => {
    const { b, clientId, appPath } = await developerWithApp();
    for (const url of [
      'https://2130706433/', 'https://0x7f.1/', 'https://0177.0.0.1/', 'https://127.1/', 'https://127.0.0.1./',
      'https://a@127.0.0.1/', 'https://a:b@example.com/', 'https://[::ffff:127.0.0.1]/', 'https://[::ffff:a9fe:a9fe]/',
      'https://[::127.0.0.1]/', 'https://[64:ff9b::7f00:1]/', 'https://[2002:7f00:1::]/', 'https://[::]/', 'https://0.0.0.0/',
      'https://[fd00:ec2::254]/', 'https://[fe80::1%25eth0]/', 'https://localhost./', 'https://ｌｏｃａｌｈｏｓｔ/',
      'https://127。0。0。1/', 'https://169.254.169.254:443/', 'http://localhost.:1/', 'http://127.0.0.2/', 'ftp://example.com/',
      'https://[', 'https://%zz/', 'https://exa mple.com/', `https://example.com/${'a'.repeat(3000)}`, 'https://\u0000/', 'javascript:alert(1)',
      'https://[::1]:99999/', 'https://example.com/#x',
    ]) {
      const reply = await post(b, appPath, `${appPath}/webhook`, { webhook_url: url });
      expect(reply.status, url).toBe(400);
    }
    expect(await webhooks.getSubscription(clientId)).toBeUndefined();
  });

  it('answers malformed posts with 4xx, never 500', async () => {
    const { b, appPath } = await developerWithApp();
    expect((await post(b, appPath, `${appPath}/webhook`, { webhook_url: 'http://localhost:9/h' })).status).toBe(303);
    const bad: [string, Record<string, string>][] = [
      [`${appPath}/webhook/deliveries/msg_zzzzzzzzz_${'f'.repeat(20)}`, {}],
      [`${appPath}/webhook/deliveries/${encodeURIComponent('msg_%E0%A4%A')}`, {}],
      [`${appPath}/webhook/deliveries/${'x'.repeat(2000)}`, {}],
      [`${appPath}/webhook/secret`, { confirm: 'maybe' }],
      [`${appPath}/webhook/delete`, { confirm: '' }],
      [`${appPath}/webhook`, { webhook_url: 'x'.repeat(100_000) }],
    ];
    for (const [action, fields] of bad) {
      const page = await b.get(appPath);
      const reply = await b.postForm(action, { ...formFields(page.text, `${appPath}/webhook`), ...fields });
      expect(reply.status, action).toBeGreaterThanOrEqual(400);
      expect(reply.status, action).toBeLessThan(500);
    }
    // Raw bodies: not form-encoded, broken escapes, no CSRF.
    for (const body of ['%', 'webhook_url=%E0%A4%A', '\u0000\u0001', 'a=b&a=c&a=d']) {
      const res = await fetch(new URL(`${appPath}/webhook`, service.authUrl), {
        method: 'POST', body, redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: b.jar.header() ?? '' },
      });
      expect(res.status, body).toBeGreaterThanOrEqual(400);
      expect(res.status, body).toBeLessThan(500);
    }
  });

  it('refuses every webhook action on another developer\'s application, and without the CSRF token', async () => {
    const owner = await developerWithApp();
    expect((await post(owner.b, owner.appPath, `${owner.appPath}/webhook`, { webhook_url: 'http://localhost:9/h' })).status).toBe(303);
    const before = await webhooks.getSubscription(owner.clientId);
    const other = await developerWithApp();
    for (const action of ['webhook', 'webhook/secret', 'webhook/delete', 'webhook/test', `webhook/deliveries/msg_000000000_${'0'.repeat(20)}`]) {
      // The other developer's own CSRF token, aimed at the owner's application.
      const page = await other.b.get(other.appPath);
      const fields = { ...formFields(page.text, `${other.appPath}/webhook`), webhook_url: 'http://localhost:10/evil', confirm: 'yes' };
      const reply = await other.b.postForm(`${owner.appPath}/${action}`, fields);
      expect(reply.status, action).toBe(404);
      // The owner without a CSRF token.
      const noCsrf = await owner.b.postForm(`${owner.appPath}/${action}`, { webhook_url: 'http://localhost:10/evil', confirm: 'yes' });
      expect(noCsrf.status, action).toBe(403);
    }
    expect(await webhooks.getSubscription(owner.clientId)).toEqual(before);
  });
});

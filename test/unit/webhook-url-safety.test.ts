import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, isPublicAddress } from '#shared/webhooks/url-safety';

const resolveTo = (...addresses: string[]) => async () => addresses;
const aws = { allowLocalHttp: false, resolve: resolveTo('93.184.215.14') };

describe('checkWebhookUrl', () => {
  it('accepts an https URL whose host resolves to public addresses only, and returns them', async () => {
    const result = await checkWebhookUrl('https://hooks.example.com/in?x=1', { allowLocalHttp: false, resolve: resolveTo('93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c') });
    expect(result).toMatchObject({ ok: true, addresses: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
    if (result.ok) expect(result.url.href).toBe('https://hooks.example.com/in?x=1');
  });

  it.each([
    ['http://169.254.169.254/', 'https://'],
    ['https://169.254.169.254/latest/meta-data/', 'public Internet address'],
    ['https://127.0.0.1/', 'public Internet address'],
    ['https://10.0.0.1/', 'public Internet address'],
    ['https://172.16.5.4/', 'public Internet address'],
    ['https://192.168.1.1/', 'public Internet address'],
    ['https://100.64.0.1/', 'public Internet address'],
    ['https://0.0.0.0/', 'public Internet address'],
    ['https://[::1]/', 'public Internet address'],
    ['https://[::]/', 'public Internet address'],
    ['https://[::ffff:127.0.0.1]/', 'public Internet address'],
    ['https://[::ffff:a9fe:a9fe]/', 'public Internet address'],
    ['https://[fe80::1]/', 'public Internet address'],
    ['https://[fd00:ec2::254]/', 'public Internet address'],
    ['https://[64:ff9b::a00:1]/', 'public Internet address'],
    ['https://[2002:a00:1::]/', 'public Internet address'],
    ['https://224.0.0.1/', 'public Internet address'],
    ['https://2130706433/', 'public Internet address'], // 127.0.0.1 as one number: the URL parser normalizes it
    ['https://0x7f.1/', 'public Internet address'],
    ['https://localhost/', 'public host'],
    ['https://intranet/', 'public host'],
    ['ftp://example.com/', 'https://'],
    ['http://example.com/', 'https://'],
    ['https://user:pass@example.com/', 'user name or password'],
    ['https://example.com/#frag', 'fragment'],
    ['not a url', 'not a valid URL'],
    ['', 'Enter the URL'],
    [`https://example.com/${'a'.repeat(2100)}`, 'at most 2048'],
  ])('refuses %s', async (url, reason) => {
    const result = await checkWebhookUrl(url, aws);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(reason);
  });

  it('refuses a host name that resolves to a private address, or to any private one among public ones', async () => {
    for (const addresses of [['10.1.2.3'], ['93.184.215.14', '192.168.0.10'], ['::1'], ['169.254.169.254']]) {
      const result = await checkWebhookUrl('https://innocent.example.com/hook', { allowLocalHttp: false, resolve: resolveTo(...addresses) });
      expect(result, addresses.join()).toMatchObject({ ok: false, reason: expect.stringContaining('public Internet address') });
    }
  });

  it('refuses a host that does not resolve, with a sentence naming it', async () => {
    const result = await checkWebhookUrl('https://nowhere.example.com/', { allowLocalHttp: false, resolve: async () => { throw new Error('ENOTFOUND'); } });
    expect(result).toEqual({ ok: false, reason: 'The host nowhere.example.com could not be found.' });
  });

  it('accepts plain http to this machine only in the local service', async () => {
    for (const url of ['http://localhost:8080/hook', 'http://127.0.0.1:9/x', 'http://[::1]:9/x']) {
      expect((await checkWebhookUrl(url, { allowLocalHttp: true })).ok, url).toBe(true);
      expect((await checkWebhookUrl(url, { allowLocalHttp: false })).ok, url).toBe(false);
    }
    // Local http is for this machine only: other plain URLs, and https to loopback, stay refused.
    expect((await checkWebhookUrl('http://example.com/', { allowLocalHttp: true, resolve: resolveTo('93.184.215.14') })).ok).toBe(false);
    expect((await checkWebhookUrl('https://127.0.0.1/', { allowLocalHttp: true })).ok).toBe(false);
  });
});

describe('isPublicAddress', () => {
  it('tells public unicast from everything else', () => {
    expect(['8.8.8.8', '93.184.215.14', '2606:4700::1111'].every(isPublicAddress)).toBe(true);
    expect(['127.0.0.2', '10.255.0.1', '198.18.0.1', '255.255.255.255', '::', 'fc00::1', 'ff02::1', '2001:db8::1', 'not-an-ip'].some(isPublicAddress)).toBe(false);
  });
});

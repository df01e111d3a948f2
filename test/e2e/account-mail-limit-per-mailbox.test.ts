import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readOutbox } from '#shared/email/outbox-mailer';
import { Browser, formFields } from '../support/oauth-client';
import { useTestService } from '../support/service';

const PASSPHRASE = 'a quiet lighthouse keeps the harbour';
const LIMIT = 5;

/**
 * Review finding: the per-address e-mail limit keyed on the address as typed (trimmed, lower case),
 * so spellings that reach the same mailbox (plus tags, dots in the local part, a trailing dot on the
 * domain, a full-width domain) each had five e-mails an hour: sign-up with victim+1@, victim+2@, …
 * mail-bombed one inbox without limit.
 */
describe('account e-mail limit across spellings of one mailbox', () => {
  const service = useTestService();
  beforeEach(() => {
    vi.setSystemTime(Math.floor(Date.now() / 3_600_000) * 3_600_000 + 60_000);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function signUp(email: string) {
    const b = new Browser(service.authUrl);
    const form = await b.get('/signup');
    return b.postForm('/signup', { ...formFields(form.text, '/signup'), firstname: 'Grace', lastname: 'Hopper', email, password: PASSPHRASE, gender: '2' });
  }

  it('sign-ups under plus tags, dots and a trailing dot share the mailbox\'s five e-mails', async () => {
    // Prepare
    const local = `bomb${randomUUID().slice(0, 8)}`;
    const variants = [
      `${local}@example.com`, `${local}+1@example.com`, `${local}+2@example.com`, `${local.slice(0, 2)}.${local.slice(2)}@example.com`,
      `${local}+x@example.com.`, `${local}+y@example.com`, `${local}+z@ｅｘａｍｐｌｅ.com`, `${local}+w@example.com`,
    ];

    // Act
    for (const email of variants) expect((await signUp(email)).status).toBe(303);

    // Assess: every answer alike, at most five messages to that mailbox in all
    const sent = (await readOutbox(service.outboxDir)).filter((m) => m.to.replace(/[.]/g, '').startsWith(local.replace(/[.]/g, '')));
    expect(sent.length).toBeLessThanOrEqual(LIMIT);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendEmailCommand } from '@aws-sdk/client-ses';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createOutboxMailer, readOutbox } from '#shared/email/outbox-mailer';
import { createSesMailer } from '#shared/email/ses-mailer';

const message = { to: 'ada@example.com', subject: 'Confirm your e-mail address', text: 'Open https://auth.example/confirm-email?token=abc' };

describe('SES mailer', () => {
  it('sends one plain-text SendEmail from the configured sender', async () => {
    // Prepare: SES has no local engine; a stand-in records what the client would send.
    const sent: unknown[] = [];
    const ses = { send: async (command: unknown) => { sent.push(command); return {}; } };

    // Act
    await createSesMailer(ses as never, 'no-reply@service.example').send(message);

    // Assess
    expect(sent).toHaveLength(1);
    expect(sent[0]).toBeInstanceOf(SendEmailCommand);
    expect((sent[0] as SendEmailCommand).input).toEqual({
      Source: 'no-reply@service.example',
      Destination: { ToAddresses: ['ada@example.com'] },
      Message: { Subject: { Data: message.subject, Charset: 'UTF-8' }, Body: { Text: { Data: message.text, Charset: 'UTF-8' } } },
    });
  });

  it('names the configuration set when it has one, so SES counts bounces and complaints and suppresses their addresses', async () => {
    const sent: SendEmailCommand[] = [];
    const ses = { send: async (command: SendEmailCommand) => { sent.push(command); return {}; } };

    await createSesMailer(ses as never, 'no-reply@service.example', 'account-mail').send(message);

    expect(sent[0]!.input.ConfigurationSetName).toBe('account-mail');
    expect(sent[0]!.input.Source).toBe('no-reply@service.example');
  });
});

describe('outbox mailer', () => {
  let folder: string | undefined;
  afterEach(() => {
    vi.useRealTimers();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('writes one file per message and reads them back newest first', async () => {
    // Prepare: messages are ordered by the time they were sent, which the test sets.
    folder = mkdtempSync(join(tmpdir(), 'dus-outbox-'));
    const dir = join(folder, 'nested');
    const mailer = createOutboxMailer(dir);

    // Act
    vi.setSystemTime(new Date('2026-05-06T07:08:09.010Z'));
    await mailer.send(message);
    vi.setSystemTime(new Date('2026-05-06T07:08:09.011Z'));
    await mailer.send({ ...message, subject: 'Reset your password' });

    // Assess
    const messages = await readOutbox(dir);
    expect(messages.map((m) => m.subject)).toEqual(['Reset your password', message.subject]);
    expect(messages[1]).toMatchObject(message);
  });

  it('reads an outbox that does not exist yet as empty', async () => {
    expect(await readOutbox(join(tmpdir(), `missing-${Date.now()}`))).toEqual([]);
  });
});

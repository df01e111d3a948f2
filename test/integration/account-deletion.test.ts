import { randomUUID } from 'node:crypto';
import { GetCommand, ScanCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { ApplicationsInUseError, deleteAccount, DELETION_STEPS, type DeletionDeps, type DeletionStep } from '#shared/accounts/account-deletion';
import { hashPassword } from '#shared/accounts/password';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createErasureRepo } from '#shared/data/erasure-repo';
import { createFactorSummaryRepo } from '#shared/data/factor-summary-repo';
import { createFactorRepo } from '#shared/data/factor-repo';
import { createPasskeyRepo } from '#shared/data/passkey-repo';
import { createSessionRepo } from '#shared/data/session-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { formatTimestamp } from '#shared/domain/time';
import type { User } from '#shared/domain/user';
import { newWebhookId } from '#shared/domain/webhook';
import type { MailMessage } from '#shared/email/mailer';
import { InvalidGrantError } from '#shared/errors';
import { throttleKey } from '#shared/data/item-keys';
import { makeDevice, userNamed } from '../support/factories';
import { putThrottleRecord } from '../support/throttle';
import { clients, current, doc, grants, tokenClient, seedCode, seedTokens, table, tokens, revokeToken, useTokenService } from '../support/token-service';

// An account's deletion (shared/accounts/account-deletion.ts) against DynamoDB Local: stopped after
// each of its steps and run again, it ends with no item of the user left in the table, every grant
// dead, one farewell e-mail, the address free, and another user's items untouched.

describe('account deletion', () => {
  useTokenService();
  const HASH_PROMISE = hashPassword('the-password-of-the-account');

  /** A user with everything a user can have: devices, sessions, grants in each state, an application with a webhook and a delivery. */
  async function populatedUser() {
    const repos = { doc, table };
    const user = userNamed('Ada', 'Lovelace');
    await createUserRepo(repos).createUser(user, await HASH_PROMISE);
    for (let i = 0; i < 3; i++) await createDeviceRepo(repos).createDevice(user.id, makeDevice({ id: randomUUID(), name: `Device ${i}` }));
    // Both second factors: an authenticator app with its recovery codes, and a passkey (its claim item is outside the user's partition).
    await createFactorRepo(repos).startTotpEnrolment(user.id, 'JBSWY3DPEHPK3PXP', current);
    expect(await createFactorRepo(repos).enrolTotp({
      userId: user.id, secret: 'JBSWY3DPEHPK3PXP', step: 1, recoveryCodeHashes: ['h1', 'h2'], sealedCodes: 'sealed', now: current,
    })).toBe(true);
    expect(await createPasskeyRepo(repos).addPasskey(user.id, {
      credentialId: `cred-${user.id}`, publicKey: 'pk', counter: 0, transports: ['internal'], name: 'Laptop', createdAt: formatTimestamp(current), backedUp: false,
    })).toBe('added');
    // A wrong second-factor code not long ago: the account's second-factor throttle record, keyed by its id.
    await putThrottleRecord(repos, 'second-factor', user.id, { failures: 1, nextAttemptAt: current.getTime() });
    const sessions = createSessionRepo(repos);
    await sessions.createSession(user.id, current);
    await sessions.createSession(user.id, current);
    // Two applications with a live grant (refresh tokens), one with a code not yet exchanged, one whose family was revoked.
    const live = [await seedTokens({ code: { userId: user.id } }), await seedTokens({ code: { userId: user.id } })];
    await seedCode({ code: { userId: user.id } });
    const revoked = await seedTokens({ code: { userId: user.id } });
    await revokeToken(revoked.credentials, revoked.issued.refresh_token);
    // An application the user develops, authorized by the user only, with a webhook and one delivery.
    const own = tokenClient({ developerId: user.id, developerName: 'Ada Lovelace' });
    await clients.createClient(own);
    await grants.saveConsent({ userId: user.id, clientId: own.clientId, scopes: ['read_user'], grantedAt: formatTimestamp(current) });
    const webhooks = createWebhookRepo(repos);
    await webhooks.setUrl(own.clientId, 'https://hooks.example/receiver');
    await webhooks.createDelivery({
      clientId: own.clientId, webhookId: newWebhookId(current), eventType: 'webhook.test', payload: '{}', userId: user.id,
    }, current);
    return { user, live };
  }

  async function scan() {
    const { Items = [] } = await doc.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
    return Items;
  }
  /** Every item that names the user anywhere: in a key, an attribute, a list. */
  const itemsOfUser = async (user: User) => (await scan()).filter((item) => {
    const text = JSON.stringify(item);
    return text.includes(user.id) || text.includes(user.email);
  });

  function deps(mail: MailMessage[], afterStep?: (step: DeletionStep) => void): DeletionDeps {
    const repos = { doc, table };
    return {
      erasure: createErasureRepo(repos), grants, clients, webhooks: createWebhookRepo(repos), sessions: createSessionRepo(repos),
      mailer: { send: async (message) => { mail.push(message); } }, issuer: 'https://auth.example.test', afterStep, now: () => current,
    };
  }

  it.each(DELETION_STEPS.slice(0, -1).map((step, i) => [i + 1, step] as const))(
    'stopped after step %i (%s), a second run finishes it: no item of the user, grants dead, one e-mail, the address free',
    async (_, stoppedAfter) => {
      const bystander = await populatedUser();
      const itemsOfBystander = (await itemsOfUser(bystander.user)).length;
      const { user, live } = await populatedUser();
      expect((await itemsOfUser(user)).length).toBeGreaterThan(10);
      const mail: MailMessage[] = [];

      const crash = new Error(`crash after ${stoppedAfter}`);
      await expect(deleteAccount(deps(mail, (step) => {
        if (step === stoppedAfter) throw crash;
      }), user.id)).rejects.toBe(crash);
      // Stopped: the account is marked, and cannot sign in as before.
      const half = await createUserRepo({ doc, table }).getUserRecord(user.id);
      expect(half?.deleting).toBe(true);
      expect(await createErasureRepo({ doc, table }).pendingDeletions()).toContain(user.id);

      expect(await deleteAccount(deps(mail), user.id)).toBe('deleted');

      expect(await itemsOfUser(user)).toEqual([]);
      expect(await createErasureRepo({ doc, table }).pendingDeletions()).not.toContain(user.id);
      for (const { credentials, issued } of live) {
        await expect(tokens.refresh(credentials, { refreshToken: issued.refresh_token })).rejects.toBeInstanceOf(InvalidGrantError);
      }
      expect(mail.map((m) => [m.to, m.subject])).toEqual([[user.email, 'Your account has been deleted']]);
      expect(mail[0]!.text).toContain('35 days');
      // The address is free for a new account, and the other user lost nothing.
      await createUserRepo({ doc, table }).createUser(userNamed('Ada', 'Lovelace', { email: user.email }), await HASH_PROMISE);
      expect((await itemsOfUser(bystander.user)).length).toBe(itemsOfBystander);
      // Run again once done: nothing to do.
      expect(await deleteAccount(deps(mail), user.id)).toBe('absent');
    },
  );

  it('takes the account’s second-factor throttle record with its second factors', async () => {
    const { user } = await populatedUser();
    const throttled = async () => (await doc.send(new GetCommand({ TableName: table, Key: throttleKey('second-factor', user.id), ConsistentRead: true }))).Item;
    expect(await throttled()).toBeDefined();

    await expect(deleteAccount(deps([], (step) => {
      if (step === 'devices') throw new Error('stop after the devices step');
    }), user.id)).rejects.toThrow('stop after the devices step');

    expect(await throttled()).toBeUndefined();
  });

  it('is refused, nothing changed, while another person uses an application the user develops', async () => {
    const { user } = await populatedUser();
    const other = userNamed('Ada', 'Lovelace');
    const [own] = await clients.listClientsByDeveloper(user.id);
    await grants.saveConsent({ userId: other.id, clientId: own!.clientId, scopes: ['read_device'], grantedAt: formatTimestamp(current) });
    const before = await scan();
    const mail: MailMessage[] = [];

    const refused = await deleteAccount(deps(mail), user.id).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApplicationsInUseError);
    expect((refused as ApplicationsInUseError).applications.map((a) => [a.client.clientId, a.users])).toEqual([[own!.clientId, 1]]);
    expect(await scan()).toEqual(before);
    expect(mail).toEqual([]);
  });

  it('once started, finishes even if someone authorized the user’s application since: that application goes, its user’s grant ended', async () => {
    const { user } = await populatedUser();
    const [own] = await clients.listClientsByDeveloper(user.id);
    const other = userNamed('Ada', 'Lovelace');
    const stop = new Error('stop');
    await expect(deleteAccount(deps([], (step) => {
      if (step === 'mark') throw stop;
    }), user.id)).rejects.toBe(stop);
    await grants.saveConsent({ userId: other.id, clientId: own!.clientId, scopes: ['read_device'], grantedAt: formatTimestamp(current) });

    expect(await deleteAccount(deps([]), user.id)).toBe('deleted');
    expect(await itemsOfUser(user)).toEqual([]);
    expect(await grants.getConsent(other.id, own!.clientId)).toBeUndefined();
    expect(await clients.getClient(own!.clientId)).toBeUndefined();
  });

  describe('the export’s second factors (factorsOf)', () => {
    it('summarises the authenticator app, the recovery codes left and the passkeys, oldest first, leaving out an enrolment and codes to show', async () => {
      const { user } = await populatedUser();
      const repos = { doc, table };
      const later = new Date(current.getTime() + 60_000);
      expect(await createPasskeyRepo(repos).addPasskey(user.id, {
        credentialId: `synced-${user.id}`, publicKey: 'pk2', counter: 3, transports: [], name: 'Phone', createdAt: formatTimestamp(later),
        lastUsedAt: formatTimestamp(later), backedUp: true,
      })).toBe('added');
      await createFactorRepo(repos).startTotpEnrolment(user.id, 'ENROLMENTWAITINGXX', later);

      const summary = await createFactorSummaryRepo(repos).factorsOf(user.id);

      expect(summary).toEqual({
        authenticatorApp: { enrolledAt: formatTimestamp(current) },
        recoveryCodesLeft: 2,
        passkeys: [
          { name: 'Laptop', createdAt: formatTimestamp(current), backedUp: false },
          { name: 'Phone', createdAt: formatTimestamp(later), lastUsedAt: formatTimestamp(later), backedUp: true },
        ],
      });
    });

    it('reads an account without second factors as none', async () => {
      const user = userNamed('Ada', 'Lovelace');
      await createUserRepo({ doc, table }).createUser(user, await HASH_PROMISE);

      expect(await createFactorSummaryRepo({ doc, table }).factorsOf(user.id)).toEqual({ recoveryCodesLeft: 0, passkeys: [] });
    });
  });
});

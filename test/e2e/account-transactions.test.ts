import { randomUUID } from 'node:crypto';
import { ScanCommand, type TransactWriteCommandInput } from '#shared/data/commands';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countRequests } from '../support/count-requests';
import { Browser, createAccount, formFields, nextLoopbackAddress, signIn, type Reply } from '../support/oauth-client';
import { mailTo } from '../support/outbox';
import { loosenAuthStorageLimit, useTable, useTestService } from '../support/service';

/**
 * What the one-transaction writes of sign-up and password reset leave behind, over HTTP: a reset
 * ends every session of the account (beyond what one transaction holds too), and a sign-up with a
 * taken address writes nothing.
 */
describe('sign-up and password reset writes', () => {
  const service = useTestService();
  const { doc, repos: { users, sessions } } = useTable(service);
  /** The requests of the handlers' own client. */
  let requests: ReturnType<typeof countRequests>;
  /** The item count of every TransactWriteItems the handlers sent. */
  const transactionSizes: number[] = [];
  let detachSizes: () => void;

  beforeAll(async () => {
    // The password transaction holds 100 items: give DynamoDB Local, shared with the other test files, time for it.
    await loosenAuthStorageLimit();
    // The auth handlers' own client: imported after the service set the environment they read.
    const runtime = await import('#shared/runtime');
    requests = countRequests(runtime.doc);
    runtime.doc.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand') transactionSizes.push((args.input as TransactWriteCommandInput).TransactItems?.length ?? 0);
        return next(args);
      },
      { step: 'initialize', name: 'record-transaction-sizes' },
    );
    detachSizes = () => runtime.doc.middlewareStack.remove('record-transaction-sizes');
  });
  afterAll(() => {
    requests?.detach();
    detachSizes?.();
  });
  beforeEach(() => forget());

  function forget() {
    requests.reset();
    transactionSizes.length = 0;
  }


  /** GETs a page and posts its form to `action` with `fields` added. */
  async function submit(b: Browser, pagePath: string, action: string, fields: Record<string, string>): Promise<Reply> {
    const form = await b.get(pagePath);
    expect(form.status).toBe(200);
    return b.postForm(action, { ...formFields(form.text, action), ...fields });
  }

  /** How many items of the table have a key of each kind: links, user profiles, e-mail addresses. */
  async function itemCounts() {
    const counts = { links: 0, users: 0, emails: 0 };
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(new ScanCommand({ TableName: service.tableName, ProjectionExpression: 'pk, sk', ExclusiveStartKey: startKey }));
      for (const { pk, sk } of page.Items ?? []) {
        if (String(pk).startsWith('LINK#')) counts.links++;
        else if (String(pk).startsWith('USER#') && sk === 'PROFILE') counts.users++;
        else if (String(pk).startsWith('EMAIL#')) counts.emails++;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return counts;
  }

  /** Whether a session cookie still signs in: GET /account answers the page rather than sending to /login. */
  async function signsIn(sessionId: string): Promise<boolean> {
    const b = new Browser(service.authUrl);
    b.jar.set('session', sessionId);
    const reply = await b.get('/account');
    if (reply.status === 302) expect(reply.location).toBe('/login?return_to=%2Faccount');
    else expect(reply.status).toBe(200);
    return reply.status === 200;
  }

  /** signsIn for each, ten at a time: a burst of 120 page loads can keep DynamoDB Local busy past other test files' 1 s limits. */
  async function signInEach(sessionIds: string[]): Promise<boolean[]> {
    const results: boolean[] = [];
    for (let start = 0; start < sessionIds.length; start += 10) results.push(...await Promise.all(sessionIds.slice(start, start + 10).map(signsIn)));
    return results;
  }

  const signupFields = (email: string) => ({ firstname: 'Grace', lastname: 'Hopper', email, password: 'a quiet lighthouse keeps the harbour', gender: '2' });

  describe('POST /password-reset/confirm', () => {
    it.each([
      // 98 sessions fit in the password transaction with the link and the user; beyond, one DeleteItem each.
      [120, 22],
      [98, 0],
    ])('with %i live sessions: one transaction of 100 items, %i DeleteItem after it; no old session signs in, the new password does', async (count, deletes) => {
      const newPassword = 'a brand new passphrase for grace';
      // Prepare: the account signed in `count` times
      const account = await createAccount(service);
      const sessionIds: string[] = [];
      for (let start = 0; start < count; start += 20) {
        sessionIds.push(...await Promise.all(Array.from({ length: Math.min(20, count - start) }, () => sessions.createSession(account.user.id))));
      }
      const before = await signInEach(sessionIds);
      expect(before.filter(Boolean)).toHaveLength(count);
      const request = await submit(new Browser(service.authUrl), '/password-reset', '/password-reset', { email: account.user.email });
      expect(request).toMatchObject({ status: 303, location: '/password-reset?done=reset-sent' });
      const [mail] = (await mailTo(service, account.user.email)).filter((m) => m.subject === 'Reset your password');
      const token = new RegExp(`${service.authUrl}/password-reset/confirm\\?token=([A-Za-z0-9_-]+)`).exec(mail!.text)?.[1];
      const b = new Browser(service.authUrl);
      const page = await b.get(`/password-reset/confirm?token=${token}`);
      expect(page.status).toBe(200);
      forget();

      // Act
      // The box "also sign out every connected application" left unchecked.
      const { sign_out_apps: _box, ...form } = formFields(page.text, '/password-reset/confirm');
      const reset = await b.postForm('/password-reset/confirm', { ...form, password: newPassword });
      const operations = [...requests.operations];

      // Assess
      expect(reset).toMatchObject({ status: 303, location: '/password-reset/confirm?done=password-changed' });
      expect(operations).toEqual([
        'GetItemCommand', 'GetItemCommand', 'QueryCommand', 'TransactWriteItemsCommand', ...Array<string>(deletes).fill('DeleteItemCommand'),
      ]);
      expect(transactionSizes).toEqual([100]);
      const after = await signInEach(sessionIds);
      expect(after.filter(Boolean)).toEqual([]);
      expect(await sessions.sessionKeysOf(account.user.id)).toEqual([]);
      // The old password fails (from an address of its own, so the failure throttles no other login).
      expect((await signIn(new Browser(service.authUrl, { sourceAddress: nextLoopbackAddress() }), account)).status).toBe(401);
      expect((await signIn(new Browser(service.authUrl), { ...account, password: newPassword })).status).toBe(303);
    });
  });

  describe('POST /signup', () => {
    it('with a taken address: no user, e-mail or link item is written, at the same cost and answer as a new address, which writes one of each', async () => {
      // Prepare
      const owner = await createAccount(service);
      const fresh = `new-${randomUUID()}@example.com`;
      const initially = await itemCounts();

      // Act
      const taken = await submit(new Browser(service.authUrl), '/signup', '/signup', signupFields(owner.user.email.toUpperCase()));
      const takenOperations = [...requests.operations];
      const afterTaken = await itemCounts();
      requests.reset();
      const created = await submit(new Browser(service.authUrl), '/signup', '/signup', signupFields(fresh));
      const createdOperations = [...requests.operations];
      const afterCreated = await itemCounts();

      // Assess
      expect(taken).toMatchObject({ status: 303, location: '/signup?done=signed-up', text: '' });
      expect(created).toMatchObject({ status: 303, location: '/signup?done=signed-up', text: '' });
      expect(afterTaken).toEqual(initially);
      expect(afterCreated).toEqual({ links: initially.links + 1, users: initially.users + 1, emails: initially.emails + 1 });
      // One transaction either way (user, e-mail address, link): it fails as a whole on the taken address.
      // Then the address's mail count, either way.
      expect(takenOperations).toEqual(['TransactWriteItemsCommand', 'UpdateItemCommand']);
      expect(createdOperations).toEqual(['TransactWriteItemsCommand', 'UpdateItemCommand']);
      expect(transactionSizes).toEqual([3, 3]);
      expect((await users.findUserByEmail(owner.user.email))!.user).toEqual(owner.user);
      expect((await mailTo(service, owner.user.email)).map((m) => m.subject)).toEqual(['Someone tried to create an account with your address']);
    });
  });
});

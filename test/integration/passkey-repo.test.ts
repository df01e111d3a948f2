import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { MAX_PASSKEY_NAME, PASSKEY_REFUSALS, passkeyName, readPasskeyResponse } from '#shared/accounts/passkeys';
import { relyingPartyOf } from '#shared/accounts/relying-party';
import { createBatchReader } from '#shared/data/batch-read';
import { CHALLENGE_SECONDS, MAX_PASSKEYS, type StoredPasskey } from '#shared/data/passkey-repo';
import { passkeyClaimKey, passkeyKey, userKey } from '#shared/data/item-keys';
import { createUserRepo } from '#shared/data/user-repo';
import type { User } from '#shared/domain/user';
import { hashSecret, randomToken } from '#shared/secrets';
import { countRequests } from '../support/count-requests';
import { withFailure } from '../support/inject-failure';
import { throttled } from '../support/token-service';
import { userNamed } from '../support/factories';
import { useRepoTable } from '../support/repos';

const NOW = new Date('2026-11-27T10:00:00.000Z');

const passkey = (overrides: Partial<StoredPasskey> = {}): StoredPasskey => ({
  credentialId: randomToken(), publicKey: randomToken(), counter: 0, transports: ['internal'], name: 'Laptop', createdAt: '2026-11-27T10:00:00.000', backedUp: false,
  ...overrides,
});

describe('passkeys on DynamoDB Local', () => {
  const { doc, table, repos: { passkeys } } = useRepoTable();

  const item = async (key: { pk: string; sk: string }) => (await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
  async function user(): Promise<User> {
    const u = userNamed('Pat', 'Passkey');
    await createUserRepo({ doc, table }).createUser(u, 'scrypt$hash');
    return u;
  }

  it('adds passkeys with their claim and count, lists them oldest first, and removes one with its claim', async () => {
    const u = await user();
    const first = passkey({ name: 'Phone', createdAt: '2026-11-27T09:00:00.000' });
    const second = passkey({ name: 'Laptop', createdAt: '2026-11-27T10:00:00.000' });
    expect(await passkeys.addPasskey(u.id, second)).toBe('added');
    expect(await passkeys.addPasskey(u.id, first)).toBe('added');
    expect((await passkeys.passkeysOf(u.id)).map((p) => p.name)).toEqual(['Phone', 'Laptop']);
    expect((await item(userKey(u.id)))?.passkeyCount).toBe(2);
    expect((await item(passkeyClaimKey(hashSecret(first.credentialId))))?.userId).toBe(u.id);

    expect(await passkeys.removePasskey(u.id, hashSecret(first.credentialId))).toBe(true);
    expect(await passkeys.removePasskey(u.id, hashSecret(first.credentialId))).toBe(false);
    expect((await passkeys.passkeysOf(u.id)).map((p) => p.name)).toEqual(['Laptop']);
    expect(await item(passkeyClaimKey(hashSecret(first.credentialId)))).toBeUndefined();
    expect((await item(userKey(u.id)))?.passkeyCount).toBe(1);
  });

  it('refuses a credential registered to another account, and another account’s removal of it, writing nothing', async () => {
    const [owner, other] = [await user(), await user()];
    const key = passkey();
    expect(await passkeys.addPasskey(owner.id, key)).toBe('added');
    expect(await passkeys.addPasskey(other.id, key)).toBe('taken');
    expect(await passkeys.addPasskey(owner.id, key)).toBe('taken');
    expect(await passkeys.passkeysOf(other.id)).toEqual([]);
    expect((await item(userKey(other.id)))?.passkeyCount).toBeUndefined();
    expect(await passkeys.removePasskey(other.id, hashSecret(key.credentialId))).toBe(false);
    expect(await passkeys.passkeysOf(owner.id)).toHaveLength(1);
  });

  it('holds an account to 10 passkeys', async () => {
    const u = await user();
    for (let i = 0; i < MAX_PASSKEYS; i++) expect(await passkeys.addPasskey(u.id, passkey())).toBe('added');
    expect(await passkeys.addPasskey(u.id, passkey())).toBe('full');
    expect(await passkeys.passkeysOf(u.id)).toHaveLength(MAX_PASSKEYS);
    expect(await passkeys.removeAllPasskeys(u.id)).toBe(MAX_PASSKEYS);
    expect(await passkeys.passkeysOf(u.id)).toEqual([]);
    expect((await item(userKey(u.id)))?.passkeyCount).toBe(0);
  });

  it('takes a challenge once, for its purpose and user, within 5 minutes', async () => {
    const u = await user();
    const [a, b, c, d] = [randomToken(), randomToken(), randomToken(), randomToken()];
    await passkeys.createChallenge(a, 'authenticate', undefined, NOW);
    await passkeys.createChallenge(b, 'register', u.id, NOW);
    await passkeys.createChallenge(c, 'authenticate', undefined, NOW);
    await passkeys.createChallenge(d, 'register', u.id, NOW);
    expect(await passkeys.takeChallenge(a, 'register', u.id, NOW)).toBe(false);
    expect(await passkeys.takeChallenge(a, 'authenticate', undefined, NOW)).toBe(true);
    expect(await passkeys.takeChallenge(a, 'authenticate', undefined, NOW)).toBe(false);
    expect(await passkeys.takeChallenge(b, 'register', randomUUID(), NOW)).toBe(false);
    expect(await passkeys.takeChallenge(b, 'register', u.id, NOW)).toBe(true);
    expect(await passkeys.takeChallenge(c, 'authenticate', undefined, new Date(NOW.getTime() + CHALLENGE_SECONDS * 1000))).toBe(false);
    expect(await passkeys.takeChallenge(randomToken(), 'authenticate', undefined, NOW)).toBe(false);
    const raced = await Promise.all([passkeys.takeChallenge(d, 'register', u.id, NOW), passkeys.takeChallenge(d, 'register', u.id, NOW)]);
    expect(raced.sort()).toEqual([false, true]);
  });
});

describe('passkeys on DynamoDB Local: reads and refusals', () => {
  const { doc, table, repos: { passkeys } } = useRepoTable();

  async function user(): Promise<User> {
    const u = userNamed('Pat', 'Passkey');
    await createUserRepo({ doc, table }).createUser(u, 'scrypt$hash');
    return u;
  }
  const storageDown = <T>(command: string, act: () => Promise<T>) => withFailure(doc, command, throttled, act);
  const failed = { status: 'rejected', reason: { name: 'ProvisionedThroughputExceededException' } };

  it('lists passkeys oldest first whatever order the table keeps them in (their keys are hashes)', async () => {
    const u = await user();
    // Five passkeys whose keys sort newest first: only the sort puts them oldest first.
    const byKey = Array.from({ length: 5 }, () => passkey()).sort((a, b) => hashSecret(b.credentialId).localeCompare(hashSecret(a.credentialId)));
    const made = byKey.map((p, i) => ({ ...p, name: `Key ${i}`, createdAt: `2026-11-27T10:00:0${i}.000` }));
    for (const p of [...made].reverse()) expect(await passkeys.addPasskey(u.id, p)).toBe('added');

    expect((await passkeys.passkeysOf(u.id)).map((p) => p.name)).toEqual(['Key 0', 'Key 1', 'Key 2', 'Key 3', 'Key 4']);
  });

  it('follows the Query’s pages: 5 passkeys read 2 to a page are all found', async () => {
    const u = await user();
    for (let i = 0; i < 5; i++) await passkeys.addPasskey(u.id, passkey({ name: `Key ${i}`, createdAt: `2026-11-27T10:00:0${i}.000` }));
    // DynamoDB Local pages at 1 MB, which 10 passkeys never reach: a Limit of 2 makes pages.
    const name = 'two-per-page';
    doc.middlewareStack.add((next, context) => async (args) => {
      if (context.commandName === 'QueryCommand') (args.input as { Limit?: number }).Limit = 2;
      return next(args);
    }, { step: 'initialize', name });
    const requests = countRequests(doc);
    let found: StoredPasskey[];
    try {
      found = await passkeys.passkeysOf(u.id);
    } finally {
      doc.middlewareStack.remove(name);
      requests.detach();
    }

    expect(found.map((p) => p.name)).toEqual(['Key 0', 'Key 1', 'Key 2', 'Key 3', 'Key 4']);
    expect(requests.operations.length).toBeGreaterThanOrEqual(3);
  });

  it('reads a passkey as stored: its last use once used, defaults for what an item lacks', async () => {
    const u = await user();
    const used = passkey({ name: 'Used', transports: ['usb', 'nfc'], backedUp: true, createdAt: '2026-11-27T09:00:00.000' });
    expect(await passkeys.addPasskey(u.id, used)).toBe('added');
    await doc.send(new TransactWriteCommand({ TransactItems: [passkeys.usePasskeyItem(u.id, used.credentialId, 7, NOW)] }));
    const bare = randomToken();
    await doc.send(new PutCommand({
      TableName: table, Item: { ...passkeyKey(u.id, hashSecret(bare)), credentialId: bare, publicKey: 'cGs', name: 'Bare', createdAt: '2026-11-27T10:00:00.000' },
    }));

    expect(await passkeys.passkeysOf(u.id)).toEqual([
      { ...used, counter: 7, lastUsedAt: '2026-11-27T10:00:00.000' },
      { credentialId: bare, publicKey: 'cGs', counter: 0, transports: [], name: 'Bare', createdAt: '2026-11-27T10:00:00.000', lastUsedAt: undefined, backedUp: false },
    ]);
  });

  it('reads one passkey by user and credential, and nothing without both, sending no request then', async () => {
    const u = await user();
    const key = passkey();
    await passkeys.addPasskey(u.id, key);
    const readOne = (userId: string | undefined, credentialId: string | undefined) => createBatchReader({ doc, table }).read([passkeys.passkeyRead(userId, credentialId)] as const);

    expect((await readOne(u.id, key.credentialId))[0]).toEqual({ ...key, lastUsedAt: undefined });
    expect((await readOne(randomUUID(), key.credentialId))[0]).toBeUndefined();
    const requests = countRequests(doc);
    try {
      expect(await readOne(u.id, undefined)).toEqual([undefined]);
      expect(await readOne(undefined, key.credentialId)).toEqual([undefined]);
      expect(requests.operations).toEqual([]);
    } finally {
      requests.detach();
    }
  });

  it('calls a credential taken when its passkey is there without its claim', async () => {
    const u = await user();
    const key = passkey();
    await passkeys.addPasskey(u.id, key);
    await doc.send(new DeleteCommand({ TableName: table, Key: passkeyClaimKey(hashSecret(key.credentialId)) }));

    expect(await passkeys.addPasskey(u.id, key)).toBe('taken');
  });

  it('removes no passkey of an account that does not exist, and says so', async () => {
    expect(await passkeys.removeAllPasskeys(randomUUID())).toBe(0);
  });

  it('throws a storage failure instead of taking it for a refusal', async () => {
    const u = await user();
    const key = passkey();
    await passkeys.addPasskey(u.id, key);
    const challenge = randomToken();
    await passkeys.createChallenge(challenge, 'authenticate', undefined, NOW);

    expect(await storageDown('TransactWriteItemsCommand', () => passkeys.addPasskey(u.id, passkey()))).toMatchObject(failed);
    expect(await storageDown('TransactWriteItemsCommand', () => passkeys.removePasskey(u.id, hashSecret(key.credentialId)))).toMatchObject(failed);
    expect(await storageDown('DeleteItemCommand', () => passkeys.takeChallenge(challenge, 'authenticate', undefined, NOW))).toMatchObject(failed);
    expect(await storageDown('TransactWriteItemsCommand', () => passkeys.removeAllPasskeys(u.id))).toMatchObject(failed);
    expect(await passkeys.takeChallenge(challenge, 'authenticate', undefined, NOW)).toBe(true);
  });
});

describe('passkey answers and names, read without trusting them', () => {
  const clientData = (fields: Record<string, unknown>) => Buffer.from(JSON.stringify(fields)).toString('base64url');
  const b64 = (text: string) => Buffer.from(text).toString('base64url');
  const getAnswer = (overrides: Record<string, unknown> = {}, inner: Record<string, unknown> = {}) => JSON.stringify({
    id: 'Y3JlZA', rawId: 'Y3JlZA', type: 'public-key',
    response: {
      clientDataJSON: clientData({ type: 'webauthn.get', challenge: 'Y2hhbGxlbmdl', origin: 'https://auth.example.com' }),
      authenticatorData: b64('data'), signature: b64('sig'), userHandle: b64('user-1'), ...inner,
    },
    ...overrides,
  });

  it('reads a well-formed sign-in answer: credential, challenge, origin and the user handle’s user id', () => {
    expect(readPasskeyResponse(getAnswer(), 'get')).toMatchObject({ credentialId: 'Y3JlZA', challenge: 'Y2hhbGxlbmdl', origin: 'https://auth.example.com', userId: 'user-1' });
  });

  it('refuses what is not JSON, not an object, or lacks or garbles any field', () => {
    for (const json of ['', 'null', '"x"', '[]', getAnswer({ type: 'other' }), getAnswer({ rawId: 'b3RoZXI' }), getAnswer({ id: 'not base64!' }),
      getAnswer({}, { signature: undefined }), getAnswer({}, { userHandle: b64('bad id!') }), getAnswer({}, { userHandle: undefined }),
      getAnswer({}, { clientDataJSON: b64('not json') }),
      getAnswer({}, { clientDataJSON: clientData({ type: 'webauthn.create', challenge: 'Y2hhbGxlbmdl', origin: 'x' }) }),
      getAnswer({}, { clientDataJSON: clientData({ type: 'webauthn.get', challenge: 'not base64!', origin: 'x' }) }),
      getAnswer({}, { clientDataJSON: clientData({ type: 'webauthn.get', challenge: 'Y2hhbGxlbmdl', origin: 7 }) }),
      getAnswer({ id: 'a'.repeat(1401), rawId: 'a'.repeat(1401) })]) {
      expect(readPasskeyResponse(json, 'get'), json).toBeUndefined();
    }
    // A sign-in's answer is no registration's, and the reverse.
    expect(readPasskeyResponse(getAnswer(), 'create')).toBeUndefined();
  });

  it('takes each field up to its bound, and not one character more', () => {
    const challenge = 'c'.repeat(128);
    const data = (length: number) => {
      const fields = { type: 'webauthn.get', challenge, origin: 'https://auth.example.com', pad: '' };
      fields.pad = 'x'.repeat(length - JSON.stringify(fields).length);
      return Buffer.from(JSON.stringify(fields)).toString('base64url');
    };
    const accepted = [
      getAnswer({ id: 'a'.repeat(1400), rawId: 'a'.repeat(1400) }),
      getAnswer({}, { clientDataJSON: data(3072) }),
      getAnswer({}, { authenticatorData: 'a'.repeat(8192), signature: 'a'.repeat(8192) }),
    ];
    const refused = [
      getAnswer({}, { clientDataJSON: data(3073) }),
      getAnswer({}, { authenticatorData: 'a'.repeat(8193) }),
      getAnswer({}, { signature: 'a'.repeat(8193) }),
      getAnswer({}, { clientDataJSON: clientData({ type: 'webauthn.get', challenge: 'c'.repeat(129), origin: 'x' }) }),
    ];

    expect(data(3072)).toHaveLength(4096);
    for (const json of accepted) expect(readPasskeyResponse(json, 'get'), json.slice(0, 80)).toBeDefined();
    expect(readPasskeyResponse(getAnswer({}, { clientDataJSON: data(3072) }), 'get')?.challenge).toBe(challenge);
    for (const json of refused) expect(readPasskeyResponse(json, 'get'), json.slice(0, 80)).toBeUndefined();
  });

  it('reads a registration answer: its attestation object up to its bound, no user handle', () => {
    const createAnswer = (attestationObject: unknown) => JSON.stringify({
      id: 'Y3JlZA', rawId: 'Y3JlZA', type: 'public-key',
      response: { clientDataJSON: clientData({ type: 'webauthn.create', challenge: 'Y2hhbGxlbmdl', origin: 'https://auth.example.com' }), attestationObject },
    });

    expect(readPasskeyResponse(createAnswer('a'.repeat(8192)), 'create')).toEqual({
      response: JSON.parse(createAnswer('a'.repeat(8192))), credentialId: 'Y3JlZA', challenge: 'Y2hhbGxlbmdl', origin: 'https://auth.example.com', userId: undefined,
    });
    expect(readPasskeyResponse(createAnswer('a'.repeat(8193)), 'create')).toBeUndefined();
    expect(readPasskeyResponse(createAnswer(undefined), 'create')).toBeUndefined();
    expect(readPasskeyResponse(createAnswer(''), 'create')).toBeUndefined();
  });

  it('refuses a user handle that only ends with a user id', () => {
    expect(readPasskeyResponse(getAnswer({}, { userHandle: b64('bad id!user-1') }), 'get')).toBeUndefined();
  });

  it('has a message of its own for each refusal', () => {
    const messages = Object.values(PASSKEY_REFUSALS);
    expect(Object.keys(PASSKEY_REFUSALS).sort()).toEqual(['challenge', 'full', 'invalid', 'malformed', 'name', 'origin', 'other-account', 'taken', 'unknown']);
    expect(new Set(messages).size).toBe(messages.length);
    for (const message of messages) expect(message.length).toBeGreaterThan(20);
    expect(PASSKEY_REFUSALS.full).toContain(`at most ${MAX_PASSKEYS} passkeys`);
    expect(PASSKEY_REFUSALS.name).toContain(`1 to ${MAX_PASSKEY_NAME} characters`);
  });

  it('refuses an answer whose response or client data is not an object', () => {
    for (const json of ['5', 'true']) expect(readPasskeyResponse(json, 'get'), json).toBeUndefined();
    for (const response of [null, 'text', 7]) expect(readPasskeyResponse(getAnswer({ response }), 'get')).toBeUndefined();
    for (const text of ['null', '5', '"webauthn.get"']) expect(readPasskeyResponse(getAnswer({}, { clientDataJSON: b64(text) }), 'get'), text).toBeUndefined();
  });

  it('takes names of 1 to 50 characters, normalized', () => {
    expect(passkeyName('A')).toBe('A');
    expect(passkeyName('  Work   laptop ')).toBe('Work laptop');
    expect(passkeyName('é'.repeat(50))).toBe('é'.repeat(50));
    expect(passkeyName('x'.repeat(51))).toBeUndefined();
    expect(passkeyName(' \u200b ')).toBeUndefined();
  });

  it('makes the relying party of the issuer: its host name and origin', () => {
    expect(relyingPartyOf('https://auth.example.com', 'Svc')).toEqual({ id: 'auth.example.com', origin: 'https://auth.example.com', name: 'Svc' });
    expect(relyingPartyOf('http://localhost:3001', 'Svc')).toEqual({ id: 'localhost', origin: 'http://localhost:3001', name: 'Svc' });
  });
});

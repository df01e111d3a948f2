import { GetCommand } from '#shared/data/commands';
import { describe, expect, it, vi } from 'vitest';
import { authenticationOptions, signInWithPasskey } from '#shared/accounts/passkeys';
import { relyingPartyOf } from '#shared/accounts/relying-party';
import type { BatchReader } from '#shared/data/batch-read';
import { knownBrowserKey, passkeyKey, sessionKey, throttleKey, userKey } from '#shared/data/item-keys';
import { CHALLENGE_SECONDS } from '#shared/data/passkey-repo';
import type { User } from '#shared/domain/user';
import { hashSecret, randomToken } from '#shared/secrets';
import { countRequests } from '../support/count-requests';
import { SoftwarePasskey } from '../support/software-passkey';
import { putThrottleRecord } from '../support/throttle';
import { userNamed } from '../support/factories';
import { useRepoTable } from '../support/repos';

const NOW = Date.parse('2026-11-27T10:00:00.000Z');
const RP = relyingPartyOf('https://auth.example.com', 'Device and User Service');
const stamp = (at: number) => new Date(at).toISOString().slice(0, 23);

let addresses = 0;
/** An address of its own for each attempt's throttle record (10 free failures each). */
const newAddress = () => `198.51.100.${++addresses}`;

describe('signing in with a passkey, on DynamoDB Local', () => {
  const { doc, table, repos: { knownBrowsers, passkeys, sessions, throttle, users }, batch } = useRepoTable();

  const item = async (key: { pk: string; sk: string }) => (await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
  const failuresOf = async (address: string) => (await item(throttleKey('address', address)))?.failures;

  /** A user with a software passkey registered. */
  async function withPasskey(): Promise<{ user: User; key: SoftwarePasskey }> {
    const user = userNamed('Kim', 'Key');
    await users.createUser(user, 'scrypt$hash');
    const key = new SoftwarePasskey(user.id);
    expect(await passkeys.addPasskey(user.id, key.stored())).toBe('added');
    return { user, key };
  }
  const challengeAt = async (at = NOW) => (await authenticationOptions(passkeys, RP, new Date(at))).challenge;

  /** The batch reader, with `meanwhile` run right after each read: what a concurrent request wrote between this one's read and its writes. */
  const readThen = (meanwhile: () => Promise<unknown>): BatchReader => ({
    ...batch,
    async read(reads) {
      const answers = await batch.read(reads);
      await meanwhile();
      return answers;
    },
  });

  const signIn = (
    response: string, address: string,
    options: { at?: number; browserToken?: string; browser?: string; reader?: BatchReader; signInWith?: typeof signInWithPasskey; pendingUserId?: string } = {},
  ) => (options.signInWith ?? signInWithPasskey)(
    { batch: options.reader ?? batch, knownBrowsers, passkeys, sessions, throttle, users }, RP,
    { response, address, browserToken: options.browserToken, now: options.at ?? NOW, browser: options.browser, pendingUserId: options.pendingUserId },
  );

  it('offers any passkey of this site, with user verification, under a challenge of its own', async () => {
    const options = await authenticationOptions(passkeys, RP, new Date(NOW));

    expect(options).toEqual({ challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), timeout: 300_000, rpId: 'auth.example.com', allowCredentials: [], userVerification: 'required' });
    expect(await challengeAt()).not.toBe(options.challenge);
  });

  it('starts a session, records the passkey’s counter and use, gives the reservation back and remembers the browser', async () => {
    const { user, key } = await withPasskey();
    const address = newAddress();
    await putThrottleRecord({ doc, table }, 'address', address, { failures: 2, nextAttemptAt: NOW - 1000 });

    const result = await signIn(key.answer(await challengeAt(), RP.origin, RP.id), address, { browser: 'Firefox on Windows' });

    expect(result).toMatchObject({ outcome: 'signed-in', userId: user.id });
    const { sessionId, knownBrowserToken } = result as { sessionId: string; knownBrowserToken: string };
    expect(sessionId.startsWith(`${user.id}.`)).toBe(true);
    expect(await item(sessionKey(hashSecret(sessionId)))).toMatchObject({ userId: user.id, browser: 'Firefox on Windows', address });
    expect(await item(passkeyKey(user.id, hashSecret(key.credentialId)))).toMatchObject({ counter: 1, lastUsedAt: stamp(NOW) });
    expect(await item(throttleKey('address', address))).toMatchObject({ failures: 2, nextAttemptAt: NOW });
    expect(await item(knownBrowserKey(hashSecret(knownBrowserToken)))).toMatchObject({ userId: user.id, failures: 0 });
    expect((await item(userKey(user.id)))?.lastSignInAt).toBe(stamp(NOW));
  });

  it('refuses, as a sign-in’s second step, a passkey of another account than the one signing in: no session, counted; its own passes', async () => {
    const { user, key } = await withPasskey();
    const other = await withPasskey();
    const address = newAddress();
    const sessionsBefore = (await sessions.listSessions(other.user.id)).length;

    const refused = await signIn(other.key.answer(await challengeAt(), RP.origin, RP.id), address, { pendingUserId: user.id });
    const own = await signIn(key.answer(await challengeAt(), RP.origin, RP.id), address, { pendingUserId: user.id });

    expect(refused).toEqual({ outcome: 'refused', refusal: 'other-account' });
    expect((await sessions.listSessions(other.user.id)).length).toBe(sessionsBefore);
    expect(await item(passkeyKey(other.user.id, hashSecret(other.key.credentialId)))).not.toHaveProperty('lastUsedAt');
    expect(own).toMatchObject({ outcome: 'signed-in', userId: user.id });
    // The refusal stays counted on the address: the sign-in gave back only its own reservation.
    expect(await failuresOf(address)).toBe(1);
  });

  it('alerts the owner of a browser new to the account, not at the first sign-in nor from a browser it knows, which it replaces', async () => {
    const { user, key } = await withPasskey();
    const address = newAddress();
    const at = (n: number) => NOW + n * 1000;
    const sign = async (n: number, options: { browserToken?: string; browser?: string } = {}) =>
      signIn(key.answer(await challengeAt(at(n)), RP.origin, RP.id), address, { at: at(n), ...options });

    const first = await sign(0, { browser: 'Firefox on Windows' });
    const known = await sign(1, { browserToken: (first as { knownBrowserToken: string }).knownBrowserToken, browser: 'Firefox on Windows' });
    const unnamed = await sign(2);
    const other = await withPasskey();
    const theirs = await signIn(other.key.answer(await challengeAt(), RP.origin, RP.id), address);
    const borrowed = await sign(3, { browserToken: (theirs as { knownBrowserToken: string }).knownBrowserToken, browser: 'Safari on iPhone' });

    for (const result of [first, known, unnamed, theirs, borrowed]) expect(result.outcome).toBe('signed-in');
    expect(first).not.toHaveProperty('alert');
    expect(known).not.toHaveProperty('alert');
    expect(await item(knownBrowserKey(hashSecret((first as { knownBrowserToken: string }).knownBrowserToken)))).toBeUndefined();
    expect(unnamed).toMatchObject({ alert: { to: user.email, firstname: 'Kim', browser: 'An unknown browser', address, at: stamp(at(2)) } });
    expect(borrowed).toMatchObject({ alert: { to: user.email, browser: 'Safari on iPhone', address, at: stamp(at(3)) } });
  });

  it('counts each refused answer as a failure of its address, and starts no session', async () => {
    const { user, key } = await withPasskey();
    const stranger = new SoftwarePasskey(user.id);
    const someoneElse = await withPasskey();
    const address = newAddress();
    const late = key.answer(await challengeAt(), RP.origin, RP.id);
    const used = key.answer(await challengeAt(), RP.origin, RP.id);
    expect((await signIn(used, newAddress())).outcome).toBe('signed-in');
    // Another user's passkey, whose answer names this user: not found under this user.
    const misnamed = JSON.parse(someoneElse.key.answer(await challengeAt(), RP.origin, RP.id)) as { response: { userHandle: string } };
    misnamed.response.userHandle = Buffer.from(user.id).toString('base64url');
    const before = (await sessions.sessionKeysOf(user.id)).length;

    const refusals = [
      await signIn('{}', address),
      await signIn(key.answer(randomToken(), RP.origin, RP.id), address),
      await signIn(used, address),
      await signIn(late, address, { at: NOW + CHALLENGE_SECONDS * 1000 }),
      await signIn(key.answer(await challengeAt(), 'https://evil.example', RP.id), address),
      await signIn(stranger.answer(await challengeAt(), RP.origin, RP.id), address),
      await signIn(JSON.stringify(misnamed), address),
      await signIn(key.answer(await challengeAt(), RP.origin, 'evil.example'), address),
      await signIn(key.answer(await challengeAt(), RP.origin, RP.id, { userVerified: false }), address),
    ];

    expect(refusals.map((r) => (r as { refusal?: string }).refusal)).toEqual(['malformed', 'challenge', 'challenge', 'challenge', 'origin', 'unknown', 'unknown', 'invalid', 'invalid']);
    expect(await failuresOf(address)).toBe(9);
    expect(await sessions.sessionKeysOf(user.id)).toHaveLength(before);
    // As the one sign-in left it (`used`, the authenticator's second answer).
    expect(await item(passkeyKey(user.id, hashSecret(key.credentialId)))).toMatchObject({ counter: 2 });
  });

  it('refuses an answer whose signature does not verify', async () => {
    const { key } = await withPasskey();
    const answer = JSON.parse(key.answer(await challengeAt(), RP.origin, RP.id)) as { response: { authenticatorData: string } };
    // The signature counter raised after signing: what was signed is not what is sent.
    const data = Buffer.from(answer.response.authenticatorData, 'base64url');
    data.writeUInt32BE(1000, 33);
    answer.response.authenticatorData = data.toString('base64url');

    expect(await signIn(JSON.stringify(answer), newAddress())).toEqual({ outcome: 'refused', refusal: 'invalid' });
  });

  it('refuses an answer whose signature counter is behind the stored one (a cloned authenticator)', async () => {
    const { key } = await withPasskey();
    const older = key.answer(await challengeAt(), RP.origin, RP.id);
    expect((await signIn(key.answer(await challengeAt(), RP.origin, RP.id), newAddress())).outcome).toBe('signed-in');

    expect(await signIn(older, newAddress())).toEqual({ outcome: 'refused', refusal: 'invalid' });
  });

  it('answers an address in its wait with the read alone: the challenge is not taken', async () => {
    const { key } = await withPasskey();
    const address = newAddress();
    await putThrottleRecord({ doc, table }, 'address', address, { failures: 12, nextAttemptAt: NOW + 4000 });
    const answer = key.answer(await challengeAt(), RP.origin, RP.id);
    const requests = countRequests(doc);

    const result = await signIn(answer, address).finally(() => requests.detach());

    expect(result).toEqual({ outcome: 'throttled', retryAfterSeconds: 4 });
    expect(requests.operations).toEqual(['BatchGetItemCommand']);
    expect(await failuresOf(address)).toBe(12);
    expect((await signIn(answer, newAddress())).outcome).toBe('signed-in');
  });

  it('does not look at an answer whose reservation a concurrent attempt took first, and says how long to wait', async () => {
    const { key } = await withPasskey();
    const address = newAddress();
    const answer = key.answer(await challengeAt(), RP.origin, RP.id);
    const concurrentFailure = () => putThrottleRecord({ doc, table }, 'address', address, { failures: 14, nextAttemptAt: NOW + 16_000 });

    const result = await signIn(answer, address, { reader: readThen(concurrentFailure) });

    expect(result).toEqual({ outcome: 'throttled', retryAfterSeconds: 16 });
    expect((await signIn(answer, newAddress())).outcome).toBe('signed-in');
  });

  it("counts refusals and throttled attempts on the operators' dashboard (EMF metrics)", async () => {
    const { key } = await withPasskey();
    const address = newAddress();
    vi.resetModules();
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
    vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', '');
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { out.push(String(chunk)); return true; });
    const outcomes: string[] = [];
    try {
      const { signInWithPasskey: counted } = await import('#shared/accounts/passkeys');
      outcomes.push((await signIn('{}', address, { signInWith: counted })).outcome);
      await putThrottleRecord({ doc, table }, 'address', address, { failures: 12, nextAttemptAt: NOW + 4000 });
      outcomes.push((await signIn(key.answer(await challengeAt(), RP.origin, RP.id), address, { signInWith: counted })).outcome);
    } finally {
      vi.restoreAllMocks();
      vi.unstubAllEnvs();
      vi.resetModules();
    }

    const metrics = out.filter((line) => line.includes('"_aws"')).map((line) => Object.keys(JSON.parse(line)).find((name) => /^[A-Z]/.test(name)));
    expect(outcomes).toEqual(['refused', 'throttled']);
    expect(metrics).toEqual(['LoginFailures', 'LoginThrottled']);
  });
});

import { GetCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { registerPasskey, registrationOptions } from '#shared/accounts/passkeys';
import { relyingPartyOf } from '#shared/accounts/relying-party';
import { passkeyClaimKey, userKey } from '#shared/data/item-keys';
import { CHALLENGE_SECONDS, MAX_PASSKEYS } from '#shared/data/passkey-repo';
import { createUserRepo } from '#shared/data/user-repo';
import type { User } from '#shared/domain/user';
import { hashSecret, randomToken } from '#shared/secrets';
import { SoftwarePasskey } from '../support/software-passkey';
import { userNamed } from '../support/factories';
import { useRepoTable } from '../support/repos';

const NOW = new Date('2026-11-27T10:00:00.000Z');
const RP = relyingPartyOf('https://auth.example.com', 'Device and User Service');

describe('registering a passkey, on DynamoDB Local', () => {
  const { doc, table, repos: { passkeys } } = useRepoTable();

  const item = async (key: { pk: string; sk: string }) => (await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
  async function user(): Promise<User> {
    const u = userNamed('Reg', 'Istrar');
    await createUserRepo({ doc, table }).createUser(u, 'scrypt$hash');
    return u;
  }
  /** Options for `u`, and the answer of a new software passkey to them (`options` as the authenticator's). */
  async function answered(u: User, options: Parameters<SoftwarePasskey['registration']>[3] = {}, at = NOW) {
    const { challenge } = await registrationOptions(passkeys, RP, u, at);
    const key = new SoftwarePasskey(u.id);
    return { key, challenge, response: key.registration(challenge, RP.origin, RP.id, options) };
  }
  const register = (u: User, response: string, name = 'Laptop', at = NOW) => registerPasskey(passkeys, RP, u, { response, name }, at);

  it('offers a discoverable credential with user verification, no attestation, and excludes the passkeys the user has', async () => {
    const u = await user();
    const existing = new SoftwarePasskey(u.id);
    expect(await passkeys.addPasskey(u.id, { ...existing.stored(), transports: ['usb', 'nfc'] })).toBe('added');

    const options = await registrationOptions(passkeys, RP, u, NOW);

    expect(options).toEqual({
      rp: { name: 'Device and User Service', id: 'auth.example.com' },
      user: { id: Buffer.from(u.id).toString('base64url'), name: u.email, displayName: 'Reg Istrar' },
      challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      pubKeyCredParams: [{ alg: -8, type: 'public-key' }, { alg: -7, type: 'public-key' }, { alg: -257, type: 'public-key' }],
      timeout: 300_000,
      attestation: 'none',
      excludeCredentials: [{ id: existing.credentialId, type: 'public-key', transports: ['usb', 'nfc'] }],
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
      extensions: { credProps: true },
    });
    expect((await registrationOptions(passkeys, RP, u, NOW)).challenge).not.toBe(options.challenge);
  });

  it('stores the passkey the browser made: its public key, counter, transports, name, time and backup state, its claim and the count', async () => {
    const u = await user();
    const { key, response } = await answered(u, { counter: 3, transports: ['internal', 'hybrid'], backedUp: true });

    expect(await register(u, response, '  Work   laptop ')).toEqual({ outcome: 'added', name: 'Work laptop' });

    expect(await passkeys.passkeysOf(u.id)).toEqual([{
      credentialId: key.credentialId, publicKey: key.publicKey.toString('base64url'), counter: 3, transports: ['internal', 'hybrid'],
      name: 'Work laptop', createdAt: '2026-11-27T10:00:00.000', lastUsedAt: undefined, backedUp: true,
    }]);
    expect((await item(passkeyClaimKey(hashSecret(key.credentialId))))?.userId).toBe(u.id);
    expect((await item(userKey(u.id)))?.passkeyCount).toBe(1);
  });

  it('stores no transports when the browser names none, and a passkey bound to its device as not backed up', async () => {
    const u = await user();
    const { response } = await answered(u);

    expect((await register(u, response)).outcome).toBe('added');

    expect(await passkeys.passkeysOf(u.id)).toMatchObject([{ counter: 0, transports: [], backedUp: false }]);
  });

  it('refuses a name of no character or over 50 before anything else: the challenge is still there for a good name', async () => {
    const u = await user();
    const { response } = await answered(u);

    expect(await register(u, response, '   ')).toEqual({ outcome: 'refused', refusal: 'name' });
    expect(await register(u, response, 'x'.repeat(51))).toEqual({ outcome: 'refused', refusal: 'name' });
    expect(await passkeys.passkeysOf(u.id)).toEqual([]);
    expect(await register(u, response, 'A')).toEqual({ outcome: 'added', name: 'A' });
  });

  it('refuses an answer it cannot read', async () => {
    const u = await user();
    expect(await register(u, 'not json')).toEqual({ outcome: 'refused', refusal: 'malformed' });
    expect(await register(u, JSON.stringify({ id: 'Y3JlZA', rawId: 'Y3JlZA', type: 'public-key', response: {} }))).toEqual({ outcome: 'refused', refusal: 'malformed' });
  });

  it('refuses a challenge it did not give this user, one used, and one over 5 minutes old, writing nothing', async () => {
    const [u, other] = [await user(), await user()];
    const key = new SoftwarePasskey(u.id);
    const unknown = key.registration(randomToken(), RP.origin, RP.id);
    const { response: others } = await answered(other);
    const { response: late } = await answered(u);
    const { response: once } = await answered(u);

    expect(await register(u, unknown)).toEqual({ outcome: 'refused', refusal: 'challenge' });
    expect(await register(u, others)).toEqual({ outcome: 'refused', refusal: 'challenge' });
    expect(await register(u, late, 'Laptop', new Date(NOW.getTime() + CHALLENGE_SECONDS * 1000))).toEqual({ outcome: 'refused', refusal: 'challenge' });
    expect(await passkeys.passkeysOf(u.id)).toEqual([]);
    expect((await register(u, once)).outcome).toBe('added');
    expect(await register(u, once)).toEqual({ outcome: 'refused', refusal: 'challenge' });
    expect(await passkeys.passkeysOf(u.id)).toHaveLength(1);
  });

  it('refuses an answer made for another site, without user verification, or that does not verify, writing nothing', async () => {
    const u = await user();
    const options = async () => (await registrationOptions(passkeys, RP, u, NOW)).challenge;
    const key = new SoftwarePasskey(u.id);

    expect(await register(u, key.registration(await options(), 'https://evil.example', RP.id))).toEqual({ outcome: 'refused', refusal: 'origin' });
    expect(await register(u, key.registration(await options(), RP.origin, 'evil.example'))).toEqual({ outcome: 'refused', refusal: 'invalid' });
    expect(await register(u, key.registration(await options(), RP.origin, RP.id, { userVerified: false }))).toEqual({ outcome: 'refused', refusal: 'invalid' });
    const garbled = JSON.parse(key.registration(await options(), RP.origin, RP.id)) as { response: { attestationObject: string } };
    garbled.response.attestationObject = Buffer.from('not cbor at all').toString('base64url');
    expect(await register(u, JSON.stringify(garbled))).toEqual({ outcome: 'refused', refusal: 'invalid' });

    expect(await passkeys.passkeysOf(u.id)).toEqual([]);
    expect(await item(passkeyClaimKey(hashSecret(key.credentialId)))).toBeUndefined();
    expect((await item(userKey(u.id)))?.passkeyCount).toBeUndefined();
  });

  it('takes a packed self-attestation signed by the new credential, and refuses one whose signature does not verify', async () => {
    const u = await user();
    const signed = await answered(u, { selfAttestation: 'signed' });
    const forged = await answered(u, { selfAttestation: 'forged' });

    expect(await register(u, forged.response)).toEqual({ outcome: 'refused', refusal: 'invalid' });
    expect(await register(u, signed.response)).toEqual({ outcome: 'added', name: 'Laptop' });
    expect((await passkeys.passkeysOf(u.id)).map((p) => p.credentialId)).toEqual([signed.key.credentialId]);
  });

  it('refuses a credential registered already, to this account or another, and an eleventh passkey', async () => {
    const [u, other] = [await user(), await user()];
    const key = new SoftwarePasskey(u.id);
    const answer = async (account: User) => key.registration((await registrationOptions(passkeys, RP, account, NOW)).challenge, RP.origin, RP.id);
    expect((await register(u, await answer(u))).outcome).toBe('added');

    expect(await register(u, await answer(u))).toEqual({ outcome: 'refused', refusal: 'taken' });
    expect(await register(other, await answer(other))).toEqual({ outcome: 'refused', refusal: 'taken' });
    expect(await passkeys.passkeysOf(other.id)).toEqual([]);

    for (let i = 1; i < MAX_PASSKEYS; i++) expect((await register(u, (await answered(u)).response)).outcome).toBe('added');
    expect(await register(u, (await answered(u)).response)).toEqual({ outcome: 'refused', refusal: 'full' });
    expect(await passkeys.passkeysOf(u.id)).toHaveLength(MAX_PASSKEYS);
  });
});

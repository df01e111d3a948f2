import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { StoredPasskey } from '#shared/data/passkey-repo';
import { randomToken } from '#shared/secrets';

/**
 * A passkey made in this process (an ES256 key pair), for HTTP tests of passkeys without a browser:
 * its stored form (the COSE public key, as a registration would store it), its answer to
 * registration options (a "none" attestation), and answers to sign-in options, built as an
 * authenticator builds them (authenticator data with the RP id's hash and the UP and UV flags,
 * client data, an ECDSA signature over both).
 */
export class SoftwarePasskey {
  readonly credentialId = randomToken();
  private readonly privateKey: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  private counter = 0;

  constructor(readonly userId: string) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    this.publicJwk = publicKey.export({ format: 'jwk' }) as { x: string; y: string };
  }

  /** The COSE public key, as a registration carries it: CBOR map {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}. */
  private coseKey(): Buffer {
    const x = Buffer.from(this.publicJwk.x, 'base64url');
    const y = Buffer.from(this.publicJwk.y, 'base64url');
    return Buffer.concat([Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]), x, Buffer.from([0x22, 0x58, 0x20]), y]);
  }

  /** The passkey as the service stores it after a registration. */
  stored(name = 'Software key'): StoredPasskey {
    return { credentialId: this.credentialId, publicKey: this.coseKey().toString('base64url'), counter: 0, transports: ['internal'], name, createdAt: '2026-11-27T10:00:00.000', backedUp: false };
  }

  /**
   * The JSON a browser sends for registration options with `challenge`, from `origin`, for RP id
   * `rpId`: a "none" attestation whose authenticator data (UP, UV and AT flags, and BE and BS for a
   * passkey synced to the owner's other devices) carries the credential id and public key.
   */
  registration(challenge: string, origin: string, rpId: string, { backedUp = false } = {}): string {
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge, origin, crossOrigin: false }));
    const rawId = Buffer.from(this.credentialId, 'base64url');
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(rawId.length);
    const flags = 0x01 | 0x04 | 0x40 | (backedUp ? 0x08 | 0x10 : 0);
    const authData = Buffer.concat([
      createHash('sha256').update(rpId).digest(), Buffer.from([flags]), Buffer.alloc(4), Buffer.alloc(16), idLength, rawId, this.coseKey(),
    ]);
    // CBOR map {"fmt": "none", "attStmt": {}, "authData": <bytes>}; authData is 164 bytes (one length byte).
    const attestationObject = Buffer.concat([
      Buffer.from([0xa3, 0x63]), Buffer.from('fmt'), Buffer.from([0x64]), Buffer.from('none'),
      Buffer.from([0x67]), Buffer.from('attStmt'), Buffer.from([0xa0]),
      Buffer.from([0x68]), Buffer.from('authData'), Buffer.from([0x58, authData.length]), authData,
    ]);
    return JSON.stringify({
      id: this.credentialId, rawId: this.credentialId, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'platform',
      response: { clientDataJSON: clientDataJSON.toString('base64url'), attestationObject: attestationObject.toString('base64url'), transports: ['internal'] },
    });
  }

  /** The JSON a browser sends for sign-in options with `challenge`, from `origin`, for RP id `rpId`. */
  answer(challenge: string, origin: string, rpId: string): string {
    this.counter += 1;
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin, crossOrigin: false }));
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    const authenticatorData = Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([0x05]), counter]);
    const signature = sign('sha256', Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()]), this.privateKey);
    return JSON.stringify({
      id: this.credentialId, rawId: this.credentialId, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'), authenticatorData: authenticatorData.toString('base64url'),
        signature: signature.toString('base64url'), userHandle: Buffer.from(this.userId).toString('base64url'),
      },
    });
  }
}

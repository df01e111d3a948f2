import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { StoredPasskey } from '#shared/data/passkey-repo';
import { randomToken } from '#shared/secrets';

/** The authenticator data's flags (WebAuthn §6.1): user present, user verified, backup eligible and state, attested credential data. */
const FLAG = { up: 0x01, uv: 0x04, be: 0x08, bs: 0x10, at: 0x40 } as const;

/** What the person and the authenticator did: user verification (on unless said), a synced credential. */
export interface Gesture {
  userVerified?: boolean;
  backedUp?: boolean;
}

/** A CBOR byte string's or text string's head (major type 2 or 3) for `length`. */
function cborHead(major: 2 | 3, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 256) return Buffer.from([(major << 5) | 24, length]);
  return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff]);
}
const cborText = (text: string) => Buffer.concat([cborHead(3, Buffer.byteLength(text)), Buffer.from(text)]);

/**
 * A passkey made in this process (an ES256 key pair), for tests of the passkey ceremonies without
 * a browser: its stored form (the COSE public key, as a registration would store it), the answer to
 * registration options (attestation `none`) and answers to sign-in options, built as an
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

  /** The passkey as the service stores it after a registration. */
  /** The COSE public key (a CBOR map of an EC2 key: {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}). */
  get publicKey(): Buffer {
    const x = Buffer.from(this.publicJwk.x, 'base64url');
    const y = Buffer.from(this.publicJwk.y, 'base64url');
    return Buffer.concat([Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]), x, Buffer.from([0x22, 0x58, 0x20]), y]);
  }

  /** The passkey as the service stores it after a registration. */
  stored(name = 'Software key'): StoredPasskey {
    return { credentialId: this.credentialId, publicKey: this.publicKey.toString('base64url'), counter: 0, transports: ['internal'], name, createdAt: '2026-11-27T10:00:00.000', backedUp: false };
  }

  /**
   * The JSON a browser sends for registration options with `challenge`, from `origin`, for RP id
   * `rpId`: attestation `none`, the credential's id and public key in the authenticator data, its
   * signature counter at `counter`, and `transports` when given.
   */
  registration(
    challenge: string, origin: string, rpId: string, options: Gesture & { counter?: number; transports?: string[]; selfAttestation?: 'signed' | 'forged' } = {},
  ): string {
    this.counter = options.counter ?? 0;
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge, origin, crossOrigin: false }));
    const credentialId = Buffer.from(this.credentialId, 'base64url');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(credentialId.length);
    const authenticatorData = Buffer.concat([
      this.authenticatorDataHead(rpId, options, FLAG.at), Buffer.alloc(16), length, credentialId, this.publicKey,
    ]);
    // CBOR map {fmt: 'none', attStmt: {}, authData: <bytes>}, or a packed self-attestation {fmt:
    // 'packed', attStmt: {alg: -7, sig: <the signature of authData and the client data's hash>}}
    // signed by the credential's key (or, forged, by another).
    let statement: Buffer[] = [cborText('fmt'), cborText('none'), cborText('attStmt'), Buffer.from([0xa0])];
    if (options.selfAttestation) {
      const signer = options.selfAttestation === 'signed' ? this.privateKey : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      const sig = sign('sha256', Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()]), signer);
      statement = [cborText('fmt'), cborText('packed'), cborText('attStmt'), Buffer.from([0xa2]), cborText('alg'), Buffer.from([0x26]), cborText('sig'), cborHead(2, sig.length), sig];
    }
    const attestationObject = Buffer.concat([Buffer.from([0xa3]), ...statement, cborText('authData'), cborHead(2, authenticatorData.length), authenticatorData]);
    return JSON.stringify({
      id: this.credentialId, rawId: this.credentialId, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'), attestationObject: attestationObject.toString('base64url'),
        ...(options.transports ? { transports: options.transports } : {}),
      },
    });
  }

  /** The JSON a browser sends for sign-in options with `challenge`, from `origin`, for RP id `rpId`. */
  answer(challenge: string, origin: string, rpId: string, gesture: Gesture = {}): string {
    this.counter += 1;
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin, crossOrigin: false }));
    const authenticatorData = this.authenticatorDataHead(rpId, gesture, 0);
    const signature = sign('sha256', Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()]), this.privateKey);
    return JSON.stringify({
      id: this.credentialId, rawId: this.credentialId, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'), authenticatorData: authenticatorData.toString('base64url'),
        signature: signature.toString('base64url'), userHandle: Buffer.from(this.userId).toString('base64url'),
      },
    });
  }

  /** The authenticator data's first 37 bytes: the RP id's hash, the flags, the signature counter. */
  private authenticatorDataHead(rpId: string, { userVerified = true, backedUp = false }: Gesture, more: number): Buffer {
    const flags = FLAG.up | (userVerified ? FLAG.uv : 0) | (backedUp ? FLAG.be | FLAG.bs : 0) | more;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    return Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([flags]), counter]);
  }
}

import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { StoredPasskey } from '#shared/data/passkey-repo';
import { randomToken } from '#shared/secrets';

/**
 * A passkey made in this process (an ES256 key pair), for HTTP tests of the passkey sign-in without
 * a browser: its stored form (the COSE public key, as a registration would store it) and answers to
 * sign-in options, built as an authenticator builds them (authenticator data with the RP id's hash
 * and the UP and UV flags, client data, an ECDSA signature over both).
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
  stored(name = 'Software key'): StoredPasskey {
    const x = Buffer.from(this.publicJwk.x, 'base64url');
    const y = Buffer.from(this.publicJwk.y, 'base64url');
    // CBOR map of the COSE EC2 key: {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}
    const cose = Buffer.concat([Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]), x, Buffer.from([0x22, 0x58, 0x20]), y]);
    return { credentialId: this.credentialId, publicKey: cose.toString('base64url'), counter: 0, transports: ['internal'], name, createdAt: '2026-11-27T10:00:00.000', backedUp: false };
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

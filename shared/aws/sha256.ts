import { createHash, createHmac, createSecretKey, type Hash, type Hmac } from 'node:crypto';

/**
 * The SHA-256 the AWS SDK signs requests with (its `sha256` client option), the SDK's own Node
 * class but for the key of an HMAC: that is handed to Node as a KeyObject.
 *
 * SigV4 signs every request with an HMAC keyed by the day's signing key, a Uint8Array. Given bytes,
 * Node 24's `createHmac` first asks whether they are a KeyObject and then a CryptoKey, and each
 * question throws and catches an error inside Node: an HMAC keyed by bytes costs about 20 µs of CPU,
 * one keyed by a KeyObject about 6 µs (`createSecretKey` takes bytes without asking). A string key
 * (the secret access key) is answered at once and passed as it is. The digests are the same.
 */
export class Sha256 {
  private readonly secret: string | Bytes | undefined;
  private hash: Hash | Hmac;

  constructor(secret?: string | Bytes) {
    this.secret = secret;
    this.hash = this.create();
  }

  update(data: string | ArrayBufferView): void {
    this.hash.update(data as Uint8Array | string);
  }

  async digest(): Promise<Uint8Array> {
    // As the SDK's class: a plain hash may be read and then fed more; an HMAC is read once.
    return this.secret ? this.hash.digest() : (this.hash as Hash).copy().digest();
  }

  reset(): void {
    this.hash = this.create();
  }

  private create(): Hash | Hmac {
    // As the SDK's class: no secret, or an empty string, means a plain hash.
    const secret = this.secret;
    if (!secret) return createHash('sha256');
    if (typeof secret === 'string') return createHmac('sha256', secret);
    return createHmac('sha256', createSecretKey((ArrayBuffer.isView(secret) ? secret : new Uint8Array(secret)) as NodeJS.ArrayBufferView));
  }
}

type Bytes = ArrayBuffer | ArrayBufferView;

import { createHash, createHmac, randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
// The signer inside every SDK client (a dependency of @aws-sdk/core), used here as the SDK uses it.
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { awsClientConfig } from '#shared/aws/client-config';
import { Sha256 } from '#shared/aws/sha256';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('Sha256 (the SDK clients\' hash)', () => {
  it('gives the HMAC Node gives, whatever form the key has', async () => {
    const key = randomBytes(32);
    const expected = createHmac('sha256', key).update('data').digest('hex');
    for (const secret of [key, new Uint8Array(key), key.buffer.slice(key.byteOffset, key.byteOffset + 32), new DataView(key.buffer, key.byteOffset, 32)]) {
      const hmac = new Sha256(secret);
      hmac.update('data');
      expect(hex(await hmac.digest())).toBe(expected);
    }
    const text = new Sha256('AWS4secret');
    text.update(Buffer.from('data'));
    expect(hex(await text.digest())).toBe(createHmac('sha256', 'AWS4secret').update('data').digest('hex'));
  });

  it('is a plain hash without a key (or with an empty one) that can be read and fed again, and reset', async () => {
    for (const hash of [new Sha256(), new Sha256('')]) {
      hash.update('ab');
      expect(hex(await hash.digest())).toBe(createHash('sha256').update('ab').digest('hex'));
      hash.update('c');
      expect(hex(await hash.digest())).toBe(createHash('sha256').update('abc').digest('hex'));
      hash.reset();
      expect(hex(await hash.digest())).toBe(createHash('sha256').update('').digest('hex'));
    }
  });

  it('signs a request as AWS\'s Signature Version 4 test suite says (get-vanilla)', async () => {
    const signer = new SignatureV4({
      service: 'service', region: 'us-east-1', sha256: Sha256, applyChecksum: false,
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
    });
    const signed = await signer.sign(
      { method: 'GET', protocol: 'https:', hostname: 'example.amazonaws.com', path: '/', query: {}, headers: { host: 'example.amazonaws.com' } },
      { signingDate: new Date('2015-08-30T12:36:00Z') },
    );
    expect(signed.headers.authorization).toBe('AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, '
      + 'SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31');
  });

  it('is the hash every service client is created with', () => {
    const client = new DynamoDBClient({ ...awsClientConfig(), region: 'eu-west-1' });
    expect(client.config.sha256).toBe(Sha256);
    client.destroy();
  });
});

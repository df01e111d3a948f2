import { describe, expect, it } from 'vitest';
import { memoized } from '#shared/data/document-client';

// The DynamoDB client asks the SDK's credentials chain again only when what it gave is about to
// expire (shared/data/document-client.ts): a chain that answers from a role or SSO makes a request.

function counting(expiresInMs: number | undefined, fail = false) {
  let calls = 0;
  const provider = async () => {
    calls += 1;
    if (fail && calls === 1) throw new Error('no credentials yet');
    return { accessKeyId: `key-${calls}`, secretAccessKey: 'secret', ...(expiresInMs === undefined ? {} : { expiration: new Date(Date.now() + expiresInMs) }) };
  };
  return { provider, get calls() { return calls; } };
}

describe('memoized credentials', () => {
  it('asks once for credentials that do not expire, or expire in more than 5 minutes, also when first asked concurrently', async () => {
    for (const expiresInMs of [undefined, 60 * 60_000]) {
      const source = counting(expiresInMs);
      const credentials = memoized(source.provider);
      const answers = await Promise.all([credentials(), credentials(), credentials()]);
      await credentials();
      expect(source.calls).toBe(1);
      expect(new Set(answers.map((answer) => answer.accessKeyId))).toEqual(new Set(['key-1']));
    }
  });

  it('asks again for credentials expiring within 5 minutes, and after a failure', async () => {
    const expiring = counting(4 * 60_000);
    const fromExpiring = memoized(expiring.provider);
    await fromExpiring();
    expect((await fromExpiring()).accessKeyId).toBe('key-2');

    const failing = counting(undefined, true);
    const fromFailing = memoized(failing.provider);
    await expect(fromFailing()).rejects.toThrow('no credentials yet');
    expect((await fromFailing()).accessKeyId).toBe('key-2');
    expect(failing.calls).toBe(2);
  });
});

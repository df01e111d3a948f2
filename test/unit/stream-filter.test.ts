import { describe, expect, it } from 'vitest';
import { matchesFilters } from '#shared/webhooks/stream-filter';

// The local matcher of Lambda's event filter patterns (shared/webhooks/stream-filter.ts), on a
// record written by hand; test/integration/stream-filter.test.ts runs it on the template's filters
// and the records DynamoDB Local's stream hands over.

describe('matchesFilters', () => {
  const record = { eventName: 'MODIFY', dynamodb: { Keys: { pk: { S: 'FAMILY#f1' }, sk: { S: 'FAMILY' } } } };

  it('matches exact values and prefixes; every field of a filter, any of the filters', () => {
    expect(matchesFilters([{ eventName: ['INSERT', 'MODIFY'], dynamodb: { Keys: { pk: { S: [{ prefix: 'FAMILY#' }] } } } }], record)).toBe(true);
    expect(matchesFilters([{ eventName: ['REMOVE'], dynamodb: { Keys: { pk: { S: [{ prefix: 'FAMILY#' }] } } } }], record)).toBe(false);
    expect(matchesFilters([{ dynamodb: { Keys: { pk: { S: [{ prefix: 'USER#' }] } } } }, { eventName: ['MODIFY'] }], record)).toBe(true);
    // A field the record lacks does not match.
    expect(matchesFilters([{ dynamodb: { NewImage: { status: { S: ['revoked'] } } } }], record)).toBe(false);
    expect(matchesFilters([], record)).toBe(true);
  });

  it('refuses the operators it does not implement, loudly, rather than behave unlike Lambda', () => {
    for (const rule of [{ 'anything-but': ['x'] }, { numeric: ['=', 1] }, { exists: true }, { prefix: 'A', suffix: 'B' }, 1, null]) {
      expect(() => matchesFilters([{ eventName: [rule as never] }], record), JSON.stringify(rule)).toThrow(/Unsupported event filter rule/);
      // Also behind a filter that already matched.
      expect(() => matchesFilters([{ eventName: ['MODIFY'] }, { eventName: [rule as never] }], record)).toThrow(/Unsupported event filter rule/);
    }
  });
});

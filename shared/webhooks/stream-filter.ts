import { EVENT_RECORD_PATTERNS, type EventRecordPattern } from '#shared/webhooks/events';

/**
 * A Lambda event filter pattern (Lambda's "filter rule syntax"): nested objects down to arrays of
 * accepted values, each a string (equal) or `{ prefix }` (begins with). Only that subset is built
 * here and understood by `matchesFilters`.
 */
export type FilterPattern = { [field: string]: FilterPattern | FilterValue[] };
export type FilterValue = string | { prefix: string };

/** One pattern of the fan-out's event source mapping, on the stream record as Lambda hands it over. */
export function filterPattern(pattern: EventRecordPattern): FilterPattern {
  const image = (values: Readonly<Record<string, string>>): FilterPattern =>
    Object.fromEntries(Object.entries(values).map(([name, value]) => [name, { S: [value] }]));
  const keys: FilterPattern = { pk: { S: [{ prefix: pattern.keyPrefixes.pk }] } };
  if (pattern.keyPrefixes.sk !== undefined) keys.sk = { S: [{ prefix: pattern.keyPrefixes.sk }] };
  const dynamodb: FilterPattern = { Keys: keys };
  if (pattern.oldImage) dynamodb.OldImage = image(pattern.oldImage);
  if (pattern.newImage) dynamodb.NewImage = image(pattern.newImage);
  return pattern.eventNames ? { eventName: [...pattern.eventNames], dynamodb } : { dynamodb };
}

/**
 * The filters of the fan-out's event source mapping (infra/constructs/webhooks.ts puts them into the
 * template; local/webhooks.ts applies them to the local stream): a record that matches none of them
 * cannot make a webhook event (`changeToEvents`), and never invokes the fan-out.
 */
export const FAN_OUT_FILTER_PATTERNS: readonly FilterPattern[] = EVENT_RECORD_PATTERNS.map(filterPattern);

/**
 * Whether Lambda would hand `record` to the function under these filters: it matches at least one
 * (filters are alternatives; within one, every field must match, and a field's array lists the values
 * it accepts). No filters: every record. Any operator beyond equal and `prefix` throws, rather than
 * letting the local service behave unlike AWS.
 */
export function matchesFilters(filters: readonly FilterPattern[], record: unknown): boolean {
  // Every filter is evaluated, so an unknown operator throws whichever record comes first.
  return filters.length === 0 || filters.map((filter) => matchesPattern(filter, record)).includes(true);
}

function matchesPattern(pattern: FilterPattern, value: unknown): boolean {
  // Every field is checked, so an unknown operator anywhere in the pattern throws whatever the record.
  let matches = true;
  for (const [field, rule] of Object.entries(pattern)) {
    const inner = isObject(value) ? value[field] : undefined;
    const ok = Array.isArray(rule) ? matchesValues(rule, inner) : matchesPattern(rule, inner);
    matches &&= ok;
  }
  return matches;
}

function matchesValues(accepted: readonly unknown[], value: unknown): boolean {
  let matches = false;
  for (const rule of accepted) {
    if (typeof rule === 'string') {
      matches ||= value === rule;
    } else if (isObject(rule) && Object.keys(rule).length === 1 && typeof rule.prefix === 'string') {
      matches ||= typeof value === 'string' && value.startsWith(rule.prefix);
    } else {
      throw new Error(`Unsupported event filter rule ${JSON.stringify(rule)}: only exact strings and { "prefix": … } are understood`);
    }
  }
  return matches;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

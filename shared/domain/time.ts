/** UTC timestamp in the format of docs/api.md#timestamps: `YYYY-MM-DDTHH:mm:ss.SSS`, no offset. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().slice(0, 23);
}

/** Seconds since the epoch, as used by JWT claims and DynamoDB TTL attributes. */
export function epochSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

import { REVOCATION_REASONS } from '#shared/domain/grant';

// The OpenAPI 3.1 `webhooks` section: what the service POSTs to an application's webhook URL.
// Each event type (shared/domain/webhook.ts) has an entry (test/unit/openapi.test.ts checks it).

const TIMESTAMP = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}$', description: 'UTC, no offset' };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** How to check a delivery, retries and ordering: said once, in the section every event links to. */
export const WEBHOOK_DELIVERY_TEXT = [
  'Every delivery is a POST with a JSON body `{"type", "timestamp", "data"}` and the Standard Webhooks headers',
  '`webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256>`, one per live',
  'signing secret, space-separated: during a secret rotation both secrets sign). Verify the signature over the raw body',
  'with any Standard Webhooks library (for example `standardwebhooks` or `svix`) and your `whsec_…` secret; it also',
  'refuses a timestamp more than 5 minutes old. Answer 2xx within 5 seconds: the body of your answer is ignored and',
  'redirects are not followed. Any other answer, a timeout or a refused connection is retried with exponential',
  'backoff and jitter for at least 24 hours, then the delivery is dead-lettered (visible in the developer console,',
  'where "send again" redelivers it with the same `webhook-id`). Delivery is at least once: use `webhook-id` to drop',
  'duplicates. Order is not guaranteed: device events carry a per-device `sequence` that grows with every write of',
  'the device (one write can yield a `device.updated` and a `device.connection_changed` with the same sequence):',
  'apply a member\'s new value only when the event\'s sequence is above the one that last set that member.',
].join(' ');

const SIGNED_HEADERS = [
  { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string', pattern: '^msg_' }, description: 'The delivery\'s id: the same on every retry and on "send again". Drop an id you already processed.' },
  { name: 'webhook-timestamp', in: 'header', required: true, schema: { type: 'string', pattern: '^\\d+$' }, description: 'Unix seconds of this attempt; signed. Refuse one more than 5 minutes away from your clock.' },
  { name: 'webhook-signature', in: 'header', required: true, schema: { type: 'string' }, description: 'Space-separated `v1,<base64>` HMAC-SHA256 signatures of `<webhook-id>.<webhook-timestamp>.<body>`, one per live secret.' },
];

const DEVICE_BASE = {
  user_id: { type: 'string', format: 'uuid', description: 'The device\'s owner: the `sub` of your access tokens for that user' },
  device_id: { type: 'string', format: 'uuid' },
  sequence: { type: 'integer', minimum: 0, description: 'Grows with every write of this device (events of the same write share it): apply a member only when the sequence is above the one that last set that member, so a stale or duplicate event changes nothing' },
};

/** The `data` member of each event type. */
export const WEBHOOK_EVENT_DATA = {
  'device.updated': {
    summary: 'A device\'s name, place, away mode or sound changed (PUT /devices/{device_id} by any application, or an operator)',
    data: {
      type: 'object', required: ['user_id', 'device_id', 'sequence', 'changes'],
      properties: {
        ...DEVICE_BASE,
        changes: { type: 'object', description: 'Only the members that changed, with their new values', properties: {
          name: { type: 'string' }, place: { type: 'string' }, active: { type: 'boolean' }, sound: { type: 'boolean' },
          version: { type: 'string' }, reference: { type: 'string' }, latitude: { type: 'number' }, longitude: { type: 'number' },
        } },
      },
    },
  },
  'device.connection_changed': {
    summary: 'A device connected to the cloud or lost its connection',
    data: {
      type: 'object', required: ['user_id', 'device_id', 'sequence', 'connected', 'last_connection'],
      properties: { ...DEVICE_BASE, connected: { type: 'boolean' }, last_connection: TIMESTAMP },
    },
  },
  'device.added': {
    summary: 'A device was added to the user\'s devices',
    data: { type: 'object', required: ['user_id', 'device_id', 'sequence', 'device'], properties: { ...DEVICE_BASE, device: ref('Device') } },
  },
  'device.removed': {
    summary: 'A device left the user\'s devices',
    data: { type: 'object', required: ['user_id', 'device_id', 'sequence'], properties: DEVICE_BASE },
  },
  'grant.revoked': {
    summary: 'Your application lost its access to a user: its refresh tokens no longer work, and no device event of that user follows',
    data: {
      type: 'object', required: ['user_id', 'client_id', 'reason'],
      properties: {
        user_id: DEVICE_BASE.user_id,
        client_id: { type: 'string' },
        reason: {
          type: 'string', enum: [...REVOCATION_REASONS],
          description: 'user_revoked: the user withdrew access; refresh_token_reuse / code_replay: a used token or code was presented again, so the grant was ended; token_revoked: your application revoked the refresh token; account_deleted: the user deleted the account (every item of the user is gone: drop what you keep of them). A password reset that signs out every application ends each consent, and arrives as user_revoked',
        },
      },
    },
  },
  'grant.updated': {
    summary: 'The user changed what your application may do: the scopes it holds, or the devices it sees (read GET /devices again)',
    data: {
      type: 'object', required: ['user_id', 'client_id', 'scopes', 'changed'],
      properties: {
        user_id: DEVICE_BASE.user_id,
        client_id: { type: 'string' },
        scopes: { type: 'array', items: { type: 'string' }, description: 'The scopes the grant holds now: the next refresh gives no more' },
        changed: {
          type: 'array', items: { type: 'string', enum: ['scopes', 'devices'] },
          description: 'What changed: the scopes (a dropped one is gone at the next refresh, and from live access tokens within their hour), or the devices your application sees (at once)',
        },
      },
    },
  },
  'webhook.test': {
    summary: 'Sent by "Send test event" in the developer console',
    data: { type: 'object', required: ['client_id', 'message'], properties: { client_id: { type: 'string' }, message: { type: 'string' } } },
  },
} as const;

export type DocumentedEventType = keyof typeof WEBHOOK_EVENT_DATA;

/** The document's `webhooks` member: one POST operation per event type. */
export function webhooksSection(): Record<string, { post: object }> {
  return Object.fromEntries(Object.entries(WEBHOOK_EVENT_DATA).map(([type, { summary, data }]) => [type, {
    post: {
      operationId: `webhook-${type.replace(/[._]/g, '-')}`,
      summary,
      description: WEBHOOK_DELIVERY_TEXT,
      parameters: SIGNED_HEADERS,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object', required: ['type', 'timestamp', 'data'],
              properties: {
                type: { const: type },
                timestamp: { type: 'string', format: 'date-time', description: 'When the change happened (ISO 8601, UTC)' },
                data,
              },
            },
          },
        },
      },
      responses: {
        '2XX': { description: 'Received. Answer within 5 seconds; the body is ignored.' },
        default: { description: 'Anything else (or no answer within 5 s) is retried with exponential backoff and jitter for at least 24 hours, then dead-lettered.' },
      },
    },
  }]));
}

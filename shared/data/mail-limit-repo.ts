import type { RepoOperations } from '#shared/data/table-access';
import { domainToASCII } from 'node:url';
import { GetCommand, UpdateCommand } from '#shared/data/commands';
import { hashSecret } from '#shared/secrets';
import { isConditionalCheckFailed, type RepoDeps } from '#shared/data/dynamodb';
import { mailLimitKey } from '#shared/data/item-keys';
import { epochSeconds } from '#shared/domain/time';
import { normalizeEmail } from '#shared/domain/user';

/** Account e-mails (sign-up, confirmation, password reset) one address may receive per window. */
export const MAIL_LIMIT_PER_WINDOW = 5;
/** The window of MAIL_LIMIT_PER_WINDOW: one hour. */
export const MAIL_LIMIT_WINDOW_SECONDS = 3600;

/**
 * The mailbox an address reaches, as the limit counts it: spellings that many providers deliver to
 * one inbox share one counter, so that sign-ups as `ada+1@…`, `a.da@…`, `ada@example.com.` or a
 * full-width domain cannot each get their own five e-mails. Unicode NFKC, lower case; the local part
 * without its `+tag` and dots; the domain in ASCII (IDNA) without a trailing dot. Distinct mailboxes
 * that only differ so share a limit, which only ever limits more.
 */
export function mailboxKey(address: string): string {
  const email = normalizeEmail(address.normalize('NFKC'));
  const at = email.lastIndexOf('@');
  if (at < 0) return email;
  const local = email.slice(0, at).split('+')[0]!.replace(/\./g, '') || email.slice(0, at);
  const domain = email.slice(at + 1).replace(/\.+$/, '');
  return `${local}@${domainToASCII(domain) || domain}`;
}

export type MailLimitRepo = ReturnType<typeof createMailLimitRepo>;

/**
 * A per-address limit on account e-mails, against mail bombing through sign-up, resend and reset.
 * Counters live in fixed windows, one TTL item per address and window: the window is in the key, so
 * an old window's item, whenever DynamoDB deletes it, is never read again, and taking a slot is one
 * conditional UpdateItem with no read before it. The address appears only hashed (an address typed
 * into the reset form need not have an account).
 */
export function createMailLimitRepo({ doc, table }: RepoDeps) {
  return {
    /**
     * Counts one e-mail to `address` in the current window if fewer than MAIL_LIMIT_PER_WINDOW were
     * counted there; says whether it was. One UpdateItem, atomic: of concurrent calls at most the
     * limit get true. The item expires at the window's end.
     */
    async takeMailSlot(address: string, now = new Date()): Promise<boolean> {
      const windowStart = epochSeconds(now) - (epochSeconds(now) % MAIL_LIMIT_WINDOW_SECONDS);
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: mailLimitKey(hashSecret(mailboxKey(address)), windowStart),
          UpdateExpression: 'ADD sent :one SET expiresAt = :end',
          ConditionExpression: 'attribute_not_exists(sent) OR sent < :max',
          ExpressionAttributeValues: { ':one': 1, ':end': windowStart + MAIL_LIMIT_WINDOW_SECONDS, ':max': MAIL_LIMIT_PER_WINDOW },
        }));
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },

    /** How many account e-mails `address` was counted in the current window (the account's export): one GetItem. */
    async sentThisWindow(address: string, now = new Date()): Promise<number> {
      const windowStart = epochSeconds(now) - (epochSeconds(now) % MAIL_LIMIT_WINDOW_SECONDS);
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: mailLimitKey(hashSecret(mailboxKey(address)), windowStart) }));
      return Item && Number(Item.expiresAt) > epochSeconds(now) ? Number(Item.sent ?? 0) : 0;
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const MAIL_LIMIT_REPO_OPERATIONS = {
  takeMailSlot: { actions: ['UpdateItem'] },
  sentThisWindow: { actions: ['GetItem'] },
} as const satisfies RepoOperations<MailLimitRepo>;

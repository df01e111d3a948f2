import type { RepoOperations } from '#shared/data/table-access';
import { DeleteCommand, PutCommand, TransactWriteCommand } from '#shared/data/commands';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import type { BatchRead } from '#shared/data/batch-read';
import { cancellationCodes, isCancelled, isConditionalCheckFailed, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { createPendingSignInOperations } from '#shared/data/pending-sign-in-repo';
import { recoveryCodesKey, recoveryRevealKey, totpEnrolmentKey, totpKey, userKey } from '#shared/data/item-keys';

/** How long an authenticator-app enrolment waits for its first code. */
export const TOTP_ENROLMENT_SECONDS = 15 * 60;
/** How long new recovery codes wait to be shown, once. */
export const RECOVERY_REVEAL_SECONDS = 10 * 60;

/** An enrolled authenticator app: its shared secret (base32) and the last time step a code was accepted for. */
export interface TotpFactor {
  secret: string;
  /** The RFC 6238 time step (epoch seconds / 30) of the last accepted code; -1 before the first. */
  lastStep: number;
  enrolledAt: string;
}

/** A user's second factors as stored. */
export interface Factors {
  totp?: TotpFactor;
  /** The hashes of the recovery codes not used yet. */
  recoveryCodeHashes: string[];
}

/** What a second factor's transaction was refused for. */
export type FactorRefusal = 'code-used' | 'gone';

export type FactorRepo = ReturnType<typeof createFactorRepo>;

/**
 * Second factors (shared/accounts/second-factor.ts decides; this module stores): the authenticator
 * app's secret in the user's partition, its enrolment (TTL), the recovery codes' hashes (a string
 * set, each code taken out by a conditional write), the codes waiting to be shown once (sealed,
 * TTL), and the sign-ins waiting for their second factor (TTL, pending-sign-in-repo.ts). The user item carries
 * `totpEnabled`, so the login reads whether to ask for a second factor in the GetItem it makes anyway.
 * Every change of a factor and of that flag is one transaction.
 */
export function createFactorRepo({ doc, table }: RepoDeps) {
  const flagUser = (userId: string, enabled: boolean): TransactItem => ({
    Update: {
      TableName: table, Key: userKey(userId), UpdateExpression: 'SET totpEnabled = :enabled',
      ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':enabled': enabled },
    },
  });
  const useStep = (userId: string, step: number): TransactItem => ({
    Update: {
      TableName: table, Key: totpKey(userId), UpdateExpression: 'SET lastStep = :step',
      ConditionExpression: 'attribute_exists(pk) AND lastStep < :step', ExpressionAttributeValues: { ':step': step },
    },
  });
  const useRecoveryCode = (userId: string, hash: string): TransactItem => ({
    Update: {
      TableName: table, Key: recoveryCodesKey(userId), UpdateExpression: 'DELETE codes :one',
      ConditionExpression: 'contains(codes, :hash)', ExpressionAttributeValues: { ':one': new Set([hash]), ':hash': hash },
    },
  });
  /** Runs a transaction whose item at `codeIndex` spends a code: false and the reason when it was refused. */
  async function spend(items: TransactItem[], codeIndex: number): Promise<{ done: true } | { done: false; refusal: FactorRefusal }> {
    try {
      await doc.send(new TransactWriteCommand({ TransactItems: items }));
      return { done: true };
    } catch (error) {
      if (!isCancelled(error)) throw error;
      return { done: false, refusal: cancellationCodes(error)[codeIndex] === 'ConditionalCheckFailed' ? 'code-used' : 'gone' };
    }
  }

  return {
    // The sign-ins waiting for their second factor: pending-sign-in-repo.ts.
    ...createPendingSignInOperations({ doc, table }),

    /** The user's second factors, as part of a combined read: the authenticator app and the recovery codes left. */
    factorsRead(userId: string | undefined): BatchRead<Factors> {
      if (userId === undefined) return { keys: [], parse: () => ({ recoveryCodeHashes: [] }) };
      return {
        keys: [totpKey(userId), recoveryCodesKey(userId)],
        parse: ([totp, recovery]) => ({
          totp: totp ? { secret: String(totp.secret), lastStep: Number(totp.lastStep ?? -1), enrolledAt: String(totp.enrolledAt) } : undefined,
          recoveryCodeHashes: recovery?.codes instanceof Set ? [...(recovery.codes as Set<string>)] : [],
        }),
      };
    },

    /** The secret of the user's enrolment waiting for its first code, as part of a combined read (undefined once expired). */
    totpEnrolmentRead(userId: string, now: Date): BatchRead<string | undefined> {
      return {
        keys: [totpEnrolmentKey(userId)],
        parse: ([item]) => (item && Number(item.expiresAt) > epochSeconds(now) ? String(item.secret) : undefined),
      };
    },

    /** Starts (or restarts) an enrolment with a new secret. One PutItem. */
    async startTotpEnrolment(userId: string, secret: string, now: Date): Promise<void> {
      await doc.send(new PutCommand({
        TableName: table, Item: { ...totpEnrolmentKey(userId), secret, expiresAt: epochSeconds(now) + TOTP_ENROLMENT_SECONDS },
      }));
    },

    /**
     * Completes an enrolment whose first code was right, for time step `step`: the authenticator app,
     * the recovery codes' hashes, the codes sealed for their one showing, the user's flag, and the
     * enrolment used up, in one TransactWriteItems. False (nothing written) when the account has an
     * authenticator app already, or the enrolment is gone or has another secret.
     */
    async enrolTotp(enrolment: { userId: string; secret: string; step: number; recoveryCodeHashes: string[]; sealedCodes: string; now: Date }): Promise<boolean> {
      const { userId, secret, step, recoveryCodeHashes, sealedCodes, now } = enrolment;
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: table, Key: totpEnrolmentKey(userId), ConditionExpression: 'secret = :secret AND expiresAt > :now',
                ExpressionAttributeValues: { ':secret': secret, ':now': epochSeconds(now) },
              },
            },
            {
              Put: {
                TableName: table, Item: { ...totpKey(userId), secret, lastStep: step, enrolledAt: formatTimestamp(now) },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            { Put: { TableName: table, Item: { ...recoveryCodesKey(userId), codes: new Set(recoveryCodeHashes), createdAt: formatTimestamp(now) } } },
            { Put: { TableName: table, Item: { ...recoveryRevealKey(userId), sealed: sealedCodes, expiresAt: epochSeconds(now) + RECOVERY_REVEAL_SECONDS } } },
            flagUser(userId, true),
          ],
        }));
        return true;
      } catch (error) {
        if (isCancelled(error)) return false;
        throw error;
      }
    },

    /**
     * Takes the sealed recovery codes waiting to be shown: one DeleteItem that returns them, so they
     * are shown at most once. Undefined when there are none (shown already, or expired).
     */
    async takeRecoveryReveal(userId: string, now: Date): Promise<string | undefined> {
      try {
        const { Attributes } = await doc.send(new DeleteCommand({
          TableName: table, Key: recoveryRevealKey(userId), ConditionExpression: 'expiresAt > :now',
          ExpressionAttributeValues: { ':now': epochSeconds(now) }, ReturnValues: 'ALL_OLD',
        }));
        return Attributes ? String(Attributes.sealed) : undefined;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return undefined;
        throw error;
      }
    },

    /**
     * The transaction item that spends an authenticator code of time step `step`: the stored last
     * step must be lower, so a code (or an older one) is accepted once, whoever sends it first.
     */
    useTotpStepItem: useStep,

    /** The transaction item that spends a recovery code (its hash): it must still be in the set, and leaves it. */
    useRecoveryCodeItem: useRecoveryCode,

    /**
     * Removes the authenticator app and the recovery codes, spending the code that asked for it
     * (`code`: an authenticator time step or a recovery code's hash), in one TransactWriteItems.
     */
    async removeTotp(userId: string, code: { step: number } | { recoveryCodeHash: string }): Promise<{ done: true } | { done: false; refusal: FactorRefusal }> {
      // Deleting the item whose condition checks the code spends it: the factor is gone with it.
      const byStep = 'step' in code;
      return spend([
        {
          Delete: {
            TableName: table, Key: totpKey(userId),
            ConditionExpression: byStep ? 'attribute_exists(pk) AND lastStep < :step' : 'attribute_exists(pk)',
            ...(byStep ? { ExpressionAttributeValues: { ':step': code.step } } : {}),
          },
        },
        {
          Delete: {
            TableName: table, Key: recoveryCodesKey(userId),
            ...(byStep ? {} : { ConditionExpression: 'contains(codes, :hash)', ExpressionAttributeValues: { ':hash': code.recoveryCodeHash } }),
          },
        },
        flagUser(userId, false),
      ], byStep ? 0 : 1);
    },

    /**
     * Every second factor of the user gone, and the flag off: an operator's decision for a user who
     * lost them all (`npm run admin -- reset-factors`). One TransactWriteItems; true when the account exists.
     */
    async removeAllFactors(userId: string): Promise<boolean> {
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            { Delete: { TableName: table, Key: totpKey(userId) } },
            { Delete: { TableName: table, Key: totpEnrolmentKey(userId) } },
            { Delete: { TableName: table, Key: recoveryCodesKey(userId) } },
            { Delete: { TableName: table, Key: recoveryRevealKey(userId) } },
            flagUser(userId, false),
          ],
        }));
        return true;
      } catch (error) {
        if (isCancelled(error)) return false;
        throw error;
      }
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const FACTOR_REPO_OPERATIONS = {
  factorsRead: { actions: ['BatchGetItem'] },
  totpEnrolmentRead: { actions: ['BatchGetItem'] },
  startTotpEnrolment: { actions: ['PutItem'] },
  enrolTotp: { actions: ['DeleteItem', 'PutItem', 'UpdateItem'], credential: true },
  takeRecoveryReveal: { actions: ['DeleteItem'] },
  useTotpStepItem: { actions: ['UpdateItem'] },
  useRecoveryCodeItem: { actions: ['UpdateItem'] },
  removeTotp: { actions: ['DeleteItem', 'UpdateItem'], credential: true },
  removeAllFactors: { actions: ['DeleteItem', 'UpdateItem'], credential: true },
  startPendingSignIn: { actions: ['PutItem'] },
  pendingSignInRead: { actions: ['BatchGetItem'] },
  endPendingSignInItem: { actions: ['DeleteItem'] },
} as const satisfies RepoOperations<FactorRepo>;

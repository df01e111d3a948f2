import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookQueue, type WebhookQueueStandIn } from '#local/webhook-queue';
import { SQS_MAX_VISIBILITY_SECONDS } from '#shared/webhooks/deliver';
import { createSqsWebhookQueue } from '#shared/webhooks/queue';

// The local SQS stand-in answers ChangeMessageVisibility as SQS does, through the real SDK client:
// a message is invisible for at most 12 hours counted from its receipt, and the new timeout counts
// from the call, so what is asked must fit in what is left of those 12 hours (SQS API reference,
// ChangeMessageVisibility); anything else is refused with InvalidParameterValue (HTTP 400).
// Time scale 10⁻²: 1 simulated second is 10 real milliseconds.
const TIME_SCALE = 1e-2;

/** An invocation of the "delivery function" that the test holds open: its records, and how it ends. */
interface Held {
  record: SQSRecord;
  /** performance.now() when the invocation started (the receipt was just before). */
  at: number;
  finish(response: SQSBatchResponse): void;
}

/** The stand-in, invoking a "delivery function" that holds every invocation open until the test ends it. */
async function heldQueue(options: { maxConcurrency?: number; batchSize?: number } = {}) {
  const invocations: Held[] = [];
  const waiting: ((held: Held) => void)[] = [];
  const queue = await startWebhookQueue({
    timeScale: TIME_SCALE,
    visibilityTimeoutSeconds: 90,
    maxReceiveCount: 10,
    ...options,
    deliver: (event: SQSEvent) => new Promise<SQSBatchResponse>((finish) => {
      for (const record of event.Records) {
        const held = { record, at: performance.now(), finish };
        const waiter = waiting.shift();
        if (waiter) waiter(held);
        else invocations.push(held);
      }
    }),
  });
  const sqs = new SQSClient({ endpoint: queue.url, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  return {
    queue,
    sqs,
    /** Invocations started and not yet taken by `nextInvocation`. */
    invocations,
    /** The next invocation of the delivery function. */
    nextInvocation: () => new Promise<Held>((resolve) => {
      const held = invocations.shift();
      if (held) resolve(held);
      else waiting.push(resolve);
    }),
    async stop() {
      for (const held of invocations.splice(0)) held.finish({ batchItemFailures: [] });
      await queue.stop();
      sqs.destroy();
    },
  };
}

describe('the local SQS stand-in: ChangeMessageVisibility', () => {
  let queue: WebhookQueueStandIn;
  let sqs: SQSClient;
  let nextInvocation: () => Promise<Held>;
  let stop: () => Promise<void>;

  const changeVisibility = (record: SQSRecord, seconds: number) => sqs.send(new ChangeMessageVisibilityCommand({
    QueueUrl: queue.queueUrl, ReceiptHandle: record.receiptHandle, VisibilityTimeout: seconds,
  }));

  /** What a refused call threw: the SDK's error name and the HTTP status. */
  const refusal = (call: Promise<unknown>) => call.then(
    () => 'accepted',
    (error: { name: string; message: string; $metadata?: { httpStatusCode?: number } }) => ({ name: error.name, status: error.$metadata?.httpStatusCode, message: error.message }),
  );

  /** Resolves once at least `seconds` simulated seconds have passed since `held`'s receipt. */
  const simulatedSecondsSince = async (held: Held, seconds: number) => {
    while (performance.now() - held.at < seconds * 1000 * TIME_SCALE) await new Promise((r) => setTimeout(r, 5));
  };

  beforeAll(async () => {
    ({ queue, sqs, nextInvocation, stop } = await heldQueue());
  });

  afterAll(async () => {
    await stop?.();
  });

  it('refuses a timeout beyond what is left of the 12 hours since the receipt, accepts one within it, and counts again from a new receipt', async () => {
    await createSqsWebhookQueue(queue.queueUrl, sqs).send([{ clientId: 'app', webhookId: 'msg_twelve_hours' }]);
    const first = await nextInvocation();
    expect(first.record.attributes.ApproximateReceiveCount).toBe('1');

    // 43,200 s is SQS's maximum, but some time has passed since the receipt: refused, as in AWS.
    expect(await refusal(changeVisibility(first.record, SQS_MAX_VISIBILITY_SECONDS))).toEqual({
      name: 'InvalidParameterValue', status: 400,
      message: `Value ${SQS_MAX_VISIBILITY_SECONDS} for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]`,
    });
    await simulatedSecondsSince(first, 60);
    expect(await refusal(changeVisibility(first.record, SQS_MAX_VISIBILITY_SECONDS - 50))).toMatchObject({ name: 'InvalidParameterValue', status: 400 });
    // What is left of the 12 hours (less than 43,140 s now, far more than 40,000) is accepted.
    expect(await refusal(changeVisibility(first.record, 40_000))).toBe('accepted');
    expect(await refusal(changeVisibility(first.record, 0))).toBe('accepted');
    first.finish({ batchItemFailures: [{ itemIdentifier: first.record.messageId }] });

    // Visible at once (timeout 0) and received again: the 12 hours count from this receipt.
    const second = await nextInvocation();
    expect(second.record.messageId).toBe(first.record.messageId);
    expect(second.record.attributes.ApproximateReceiveCount).toBe('2');
    expect(await refusal(changeVisibility(second.record, SQS_MAX_VISIBILITY_SECONDS - 1000))).toBe('accepted');
    expect(await refusal(changeVisibility(second.record, SQS_MAX_VISIBILITY_SECONDS))).toMatchObject({ name: 'InvalidParameterValue', status: 400 });
    second.finish({ batchItemFailures: [] });

    const asked = queue.visibilityChanges().filter((c) => c.messageId === first.record.messageId);
    expect(asked.map((c) => [c.receiveCount, c.visibilityTimeout, c.refused])).toEqual([
      [1, 43_200, 'InvalidParameterValue'], [1, 43_150, 'InvalidParameterValue'], [1, 40_000, undefined], [1, 0, undefined],
      [2, 42_200, undefined], [2, 43_200, 'InvalidParameterValue'],
    ]);
    expect(asked[1]!.elapsedSeconds).toBeGreaterThanOrEqual(60);
  });

  it('refuses a timeout that is not a whole number of seconds from 0 to 43,200, and a receipt handle it never gave', async () => {
    await createSqsWebhookQueue(queue.queueUrl, sqs).send([{ clientId: 'app', webhookId: 'msg_out_of_range' }]);
    const held = await nextInvocation();
    for (const seconds of [-1, SQS_MAX_VISIBILITY_SECONDS + 1, 1.5]) {
      expect(await refusal(changeVisibility(held.record, seconds)), String(seconds)).toEqual({
        name: 'InvalidParameterValue', status: 400,
        message: `Value ${seconds} for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided.`,
      });
    }
    const unknown = { ...held.record, receiptHandle: 'not-a-receipt-handle' };
    expect(await refusal(changeVisibility(unknown, 30))).toMatchObject({ name: 'ReceiptHandleIsInvalid' });
    expect(await refusal(changeVisibility(held.record, 30))).toBe('accepted');
    held.finish({ batchItemFailures: [] });
  });
});

describe('the local SQS stand-in: the event source mapping\'s maximum concurrency', () => {
  let held: Awaited<ReturnType<typeof heldQueue>>;

  beforeAll(async () => {
    held = await heldQueue({ maxConcurrency: 2, batchSize: 1 });
  });

  afterAll(async () => {
    await held?.stop();
  });

  it('receives nothing while that many invocations run, so a waiting message keeps its receive count', async () => {
    await createSqsWebhookQueue(held.queue.queueUrl, held.sqs).send(['a', 'b', 'c'].map((id) => ({ clientId: 'app', webhookId: `msg_${id}` })));
    const first = await held.nextInvocation();
    const second = await held.nextInvocation();
    // Some polls later, the third message is still waiting, not received.
    const polls = held.queue.polls();
    while (held.queue.polls() < polls + 5) await new Promise((r) => setTimeout(r, 10));
    expect(held.invocations).toEqual([]);

    first.finish({ batchItemFailures: [] });
    const third = await held.nextInvocation();
    expect([first, second, third].map((h) => JSON.parse(h.record.body).webhookId).sort()).toEqual(['msg_a', 'msg_b', 'msg_c']);
    expect(third.record.attributes.ApproximateReceiveCount).toBe('1');
    second.finish({ batchItemFailures: [] });
    third.finish({ batchItemFailures: [] });
  });
});

describe('the local SQS stand-in: looking for messages only while one waits, as a long poll', () => {
  let held: Awaited<ReturnType<typeof heldQueue>>;

  beforeAll(async () => {
    held = await heldQueue({ batchSize: 1 });
  });

  afterAll(async () => {
    await held?.stop();
  });

  /** Lets the stand-in's timers run for `ms` (it looked every 10 ms whatever the queue held). */
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('does not look while the queue is empty, nor while its only message is being handled; a message sent is received at once', async () => {
    await wait(150);
    expect(held.queue.polls()).toBe(0);

    await createSqsWebhookQueue(held.queue.queueUrl, held.sqs).send([{ clientId: 'app', webhookId: 'msg_long_poll' }]);
    const first = await held.nextInvocation();
    const looked = held.queue.polls();
    expect(looked).toBeGreaterThan(0);
    await wait(150);
    expect(held.queue.polls()).toBe(looked);

    // Failed: back after its visibility timeout (90 simulated seconds, 900 ms here), then received again.
    first.finish({ batchItemFailures: [{ itemIdentifier: first.record.messageId }] });
    const again = await held.nextInvocation();
    expect(again.record.attributes.ApproximateReceiveCount).toBe('2');
    expect(performance.now() - first.at).toBeGreaterThanOrEqual(90 * 1000 * TIME_SCALE);
    again.finish({ batchItemFailures: [] });
  });
});


import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { ToolCallRequestedEvent } from '../events/contracts.js';
import type { BusMessage, EventSubscriber } from '../ports/event-bus.js';
import type { EventCodec } from '../events/event-codec.js';
import type { ReconciliationCase } from '../ports/case-store.js';
import type { CaseRequest } from './case-request.js';

/**
 * Where the full arguments of a dead-lettered call come from. Dead letters and cases keep only the
 * tool's audit allow-listed argument fields (no secret travels past the calls topic), so a status
 * check or a re-submission reads the original call back from the calls topic, at the position the
 * dead letter recorded (`originalTopic` / `originalPartition` / `originalOffset`).
 */
export interface OriginalCalls {
  /**
   * The call published at that position, decoded; undefined when the position holds no message any
   * more (retention) or none is found within the reader's time limit. Rejects on an unreachable
   * broker or registry only.
   */
  read(topic: string, partition: number, offset: string): Promise<ToolCallRequestedEvent | undefined>;
}

/** The full arguments of a case's call, or why they cannot be had. */
export type FullArguments =
  | { readonly ok: true; readonly arguments: Record<string, unknown> }
  | { readonly ok: false; readonly why: string };

/**
 * The call's full arguments: the case's own when its dead letter predates redaction (it carried
 * them whole), otherwise the original call's, read back from the calls topic and checked to be the
 * same call (call id and idempotency key). Never returns redacted arguments.
 */
export async function fullArguments(
  c: Pick<ReconciliationCase, 'context'>,
  request: CaseRequest,
  calls: OriginalCalls | undefined,
): Promise<FullArguments> {
  if (request.arguments === undefined) {
    return { ok: false, why: "the call's arguments were not a JSON object" };
  }
  if (!request.argumentsRedacted) return { ok: true, arguments: request.arguments };
  const { originalTopic: topic, originalPartition: partition, originalOffset: offset } = c.context;
  if (typeof topic !== 'string' || typeof partition !== 'number' || typeof offset !== 'string') {
    return { ok: false, why: 'the dead letter does not say where the original call is' };
  }
  if (calls === undefined) {
    return {
      ok: false,
      why: 'no reader of the calls topic is configured, so the original call cannot be read',
    };
  }
  const original = await calls.read(topic, partition, offset);
  if (original === undefined) {
    return {
      ok: false,
      why: `the original call is no longer on ${topic} (partition ${partition}, offset ${offset}); its retention may have passed`,
    };
  }
  if (original.callId !== request.callId || original.idempotencyKey !== request.idempotencyKey) {
    return { ok: false, why: `${topic} ${partition}@${offset} holds another call` };
  }
  let args: unknown;
  try {
    args = JSON.parse(original.argumentsJson);
  } catch {
    args = undefined;
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    return { ok: false, why: "the original call's arguments are not a JSON object" };
  }
  return { ok: true, arguments: args as Record<string, unknown> };
}

export interface SubscriberCallsOptions {
  readonly subscriber: EventSubscriber;
  readonly codec: EventCodec;
  /** Prefix of the one-off consumer groups the reads use. */
  readonly groupPrefix: string;
  /** How long one read may take. Default 15 s. */
  readonly timeoutMs?: number;
}

/**
 * Reads original calls through any event bus (the embedded memory bus): a one-member group with
 * static assignment of the one partition, from the earliest retained message, stopped as soon as
 * the message at the offset has been seen or a later one shows it is gone. It scans the partition
 * up to the offset, so on Kafka use {@link kafkaOriginalCalls}, which seeks.
 */
export function subscriberCalls(options: SubscriberCallsOptions): OriginalCalls {
  const timeoutMs = options.timeoutMs ?? 15_000;
  return {
    async read(topic, partition, offset) {
      const target = BigInt(offset);
      const groupId = `${options.groupPrefix}-read-${randomUUID()}`;
      let settle: (message: BusMessage | undefined) => void = () => undefined;
      const found = new Promise<BusMessage | undefined>((resolve) => (settle = resolve));
      const timer = setTimeout(() => settle(undefined), timeoutMs);
      const subscription = await options.subscriber.subscribe(
        { groupId, topics: [topic], fromBeginning: true, partitions: [partition] },
        async (batch, control) => {
          for (const message of batch.messages) {
            control.markDone(message.offset);
            const at = BigInt(message.offset);
            if (at === target) settle(message);
            else if (at > target) settle(undefined);
          }
        },
      );
      try {
        const message = await found;
        return message === undefined ? undefined : await options.codec.decode('calls', message.value);
      } finally {
        clearTimeout(timer);
        await subscription.stop();
      }
    },
  };
}

/**
 * Original calls on Kafka, read with a one-off kafkajs consumer per read: its fresh group joins,
 * the consumer seeks the partition to the offset at once, the first message there is taken, and
 * the group is deleted afterwards. A read fetches about one message, whatever the partition holds.
 */
export function kafkaOriginalCalls(options: {
  readonly kafka: Kafka;
  readonly codec: EventCodec;
  /** Prefix of the one-off consumer groups. */
  readonly groupPrefix: string;
  /** How long one read may take. Default 15 s. */
  readonly timeoutMs?: number;
}): OriginalCalls {
  const timeoutMs = options.timeoutMs ?? 15_000;
  return {
    async read(topic, partition, offset) {
      const target = BigInt(offset);
      const admin = options.kafka.admin();
      await admin.connect();
      try {
        // Outside the retained range (retention passed, or never written): no need to wait for it.
        const bounds = (await admin.fetchTopicOffsets(topic)).find((p) => p.partition === partition);
        if (bounds === undefined || target < BigInt(bounds.low) || target >= BigInt(bounds.high)) {
          return undefined;
        }
        const groupId = `${options.groupPrefix}-read-${randomUUID()}`;
        try {
          const value = await readAt(options.kafka, groupId, topic, partition, offset, timeoutMs);
          return value === undefined ? undefined : await options.codec.decode('calls', value);
        } finally {
          await admin.deleteGroups([groupId]).catch(() => undefined);
        }
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
    },
  };
}

/** The value at `offset` of the partition, through a one-off consumer that seeks there. */
async function readAt(
  kafka: Kafka,
  groupId: string,
  topic: string,
  partition: number,
  offset: string,
  timeoutMs: number,
): Promise<Buffer | undefined> {
  const target = BigInt(offset);
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, retry: { retries: 3 } });
  let timer: NodeJS.Timeout | undefined;
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: false });
    return await new Promise<Buffer | undefined>((resolve, reject) => {
      timer = setTimeout(() => resolve(undefined), timeoutMs);
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ partition: at, message }) => {
            if (at !== partition) return;
            const position = BigInt(message.offset);
            // A later message first means the one asked for is gone (compaction).
            if (position >= target) resolve(position === target ? (message.value ?? undefined) : undefined);
          },
        })
        .catch(reject);
      // Applied once the group has joined, before the partition's first fetch.
      consumer.seek({ topic, partition, offset });
    });
  } finally {
    clearTimeout(timer);
    await consumer.disconnect().catch(() => undefined);
  }
}

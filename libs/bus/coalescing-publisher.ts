import type { EventPublisher, OutgoingMessage } from '../ports/event-bus.js';
import { validateOutgoing, validateTopicName } from './validate.js';

/** Tuning of {@link coalescingPublisher}. */
export interface CoalescingOptions {
  /**
   * Most key, value and header bytes one send carries (default 512 KiB, half of the broker's
   * default `message.max.bytes`, which bounds a partition's record batch), so joining publishes
   * never makes a batch the broker refuses where each publish alone would have been taken. A single
   * publish larger than this is sent on its own.
   */
  readonly maxBatchBytes?: number;
}

const DEFAULT_MAX_BATCH_BYTES = 512 * 1024;

/** One caller's publish waiting for its topic's next send. */
interface Pending {
  readonly messages: readonly OutgoingMessage[];
  readonly bytes: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * An EventPublisher that sends concurrent publishes together, one send in flight per topic: a
 * topic with nothing in flight sends what arrived for it within one event-loop turn
 * (`setImmediate`) as one `inner.publish`; publishes that arrive while that send is in flight wait,
 * and go out together in the next one, in arrival order, at most `maxBatchBytes` per send. Under
 * load a call's outputs share a produce request with many other calls' instead of queueing one
 * acknowledged request each behind the producer; an idle publisher adds one `setImmediate` of delay.
 * Topics never wait for each other.
 *
 * Contract (the port's, per publish): resolves once the request carrying its messages is
 * acknowledged; rejects when it fails, and the caller may retry as with `inner` (a failed request
 * may have been partly written: a retry can repeat messages, never reorder a key's). Ordering:
 * messages of one publish keep their order, and a publish started after another resolved is sent
 * after it. Invalid messages or topic names reject at once without joining a send; a send that
 * fails with a RangeError (a partition the topic lacks) is re-sent one publish at a time, still one
 * in flight, so one bad reply address cannot fail the other callers' publishes.
 *
 * The Kafka publisher relies on "one send in flight per topic" for more than speed (see
 * `KafkaPublisher`).
 */
export function coalescingPublisher(inner: EventPublisher, options: CoalescingOptions = {}): EventPublisher {
  const maxBatchBytes = options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
  /** Per topic: the publishes waiting for its next send. A topic is here while its lane runs. */
  const lanes = new Map<string, Pending[]>();

  const send = async (topic: string, group: readonly Pending[]): Promise<void> => {
    try {
      await inner.publish(
        topic,
        group.flatMap((p) => p.messages),
      );
      for (const p of group) p.resolve();
    } catch (error) {
      if (!(error instanceof RangeError) || group.length === 1) {
        for (const p of group) p.reject(error);
        return;
      }
      for (const p of group) await send(topic, [p]);
    }
  };

  /** Sends the topic's waiting publishes, a group at a time, until none wait; never rejects. */
  const runLane = async (topic: string, queue: Pending[]): Promise<void> => {
    await new Promise((resolve) => setImmediate(resolve));
    while (queue.length > 0)
      await send(
        topic,
        takeWithin(queue, (p) => p.bytes, maxBatchBytes),
      );
    lanes.delete(topic);
  };

  return {
    publish(topic, messages) {
      try {
        validateTopicName(topic);
        validateOutgoing(messages);
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      if (messages.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const pending: Pending = { messages, bytes: messageBytes(messages), resolve, reject };
        const queue = lanes.get(topic);
        if (queue !== undefined) {
          queue.push(pending);
          return;
        }
        const fresh = [pending];
        lanes.set(topic, fresh);
        void runLane(topic, fresh);
      });
    },
  };
}

/**
 * Removes and returns the oldest items of a non-empty `queue` whose sizes together fit in
 * `maxBytes`, always at least one (an item larger than `maxBytes` goes alone): one send's worth.
 */
export function takeWithin<T>(queue: T[], bytesOf: (item: T) => number, maxBytes: number): T[] {
  let bytes = bytesOf(queue[0]!);
  let n = 1;
  while (n < queue.length && bytes + bytesOf(queue[n]!) <= maxBytes) {
    bytes += bytesOf(queue[n]!);
    n += 1;
  }
  return queue.splice(0, n);
}

/** Keys, values and headers of `messages`, in bytes: what a send of them carries, near enough. */
function messageBytes(messages: readonly OutgoingMessage[]): number {
  let bytes = 0;
  for (const m of messages) {
    bytes += Buffer.byteLength(m.key) + m.value.length;
    if (m.headers !== undefined) {
      for (const [name, value] of Object.entries(m.headers))
        bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
    }
  }
  return bytes;
}

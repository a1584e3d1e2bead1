import type { EventPublisher, OutgoingMessage } from '../ports/event-bus.js';
import { validateOutgoing, validateTopicName } from './validate.js';

/** Tuning of {@link coalescingPublisher}. */
export interface CoalescingOptions {
  /**
   * Most key + value bytes one flush sends to one topic (default 512 KiB), so no partition's record
   * batch nears the broker's 1 MB `message.max.bytes`. A single publish larger than this is sent
   * on its own.
   */
  readonly maxBatchBytes?: number;
}

const DEFAULT_MAX_BATCH_BYTES = 512 * 1024;

interface Pending {
  readonly topic: string;
  readonly messages: readonly OutgoingMessage[];
  readonly bytes: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * An EventPublisher that sends concurrent publishes together: while one flush is in flight, the
 * publishes that arrive wait, and the next flush sends them as one `inner.publish` per topic (in
 * arrival order). Under load a call's outputs share a produce request with many other calls'
 * instead of queueing one acknowledged request each behind the producer; an idle publisher adds
 * one `setImmediate` of delay.
 *
 * Contract (the port's, per publish): resolves once the request carrying its messages is
 * acknowledged; rejects when it fails, and the caller may retry as with `inner` (a failed request
 * may have been partly written: a retry can repeat messages, never reorder a key's). Ordering:
 * messages of one publish keep their order, and a publish started after another resolved is sent
 * after it. Invalid messages or topic names reject at once without joining a flush; a flush that
 * fails with a RangeError (a partition the topic lacks) is re-sent one publish at a time, so one
 * bad reply address cannot fail the other callers' publishes.
 */
export function coalescingPublisher(inner: EventPublisher, options: CoalescingOptions = {}): EventPublisher {
  const maxBatchBytes = options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
  let queue: Pending[] = [];
  let flushing = false;

  const send = (topic: string, group: readonly Pending[]): Promise<void> =>
    inner
      .publish(
        topic,
        group.flatMap((p) => p.messages),
      )
      .then(
        () => group.forEach((p) => p.resolve()),
        async (error: unknown) => {
          if (!(error instanceof RangeError) || group.length === 1) {
            group.forEach((p) => p.reject(error));
            return;
          }
          await Promise.all(group.map((p) => send(topic, [p])));
        },
      );

  const flush = async (): Promise<void> => {
    const taken = queue;
    queue = [];
    const groups: Array<{ topic: string; members: Pending[]; bytes: number }> = [];
    const open = new Map<string, { topic: string; members: Pending[]; bytes: number }>();
    for (const p of taken) {
      let group = open.get(p.topic);
      if (group === undefined || group.bytes + p.bytes > maxBatchBytes) {
        group = { topic: p.topic, members: [], bytes: 0 };
        open.set(p.topic, group);
        groups.push(group);
      }
      group.members.push(p);
      group.bytes += p.bytes;
    }
    // Groups of one topic are sent one after another (their order is arrival order); topics in parallel.
    const byTopic = new Map<string, Array<(typeof groups)[number]>>();
    for (const g of groups) byTopic.set(g.topic, [...(byTopic.get(g.topic) ?? []), g]);
    await Promise.all(
      [...byTopic.values()].map(async (chain) => {
        for (const g of chain) await send(g.topic, g.members);
      }),
    );
  };

  const kick = (): void => {
    if (flushing || queue.length === 0) return;
    flushing = true;
    setImmediate(() => {
      void flush().finally(() => {
        flushing = false;
        kick();
      });
    });
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
      const bytes = messages.reduce((n, m) => n + m.value.length + Buffer.byteLength(m.key), 0);
      return new Promise<void>((resolve, reject) => {
        queue.push({ topic, messages, bytes, resolve, reject });
        kick();
      });
    },
  };
}

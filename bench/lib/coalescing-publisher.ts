/**
 * A PROTOTYPE for the benchmarks, not part of toolgate: an EventPublisher that coalesces
 * concurrent publishes into one produce request per topic. It measures what the executor would
 * gain if its outputs were batched across calls instead of sent one produce request each.
 *
 * One flush is in flight at a time; publishes that arrive meanwhile wait and go out together in the
 * next flush, so batches grow with the load and an idle publisher adds no delay beyond one
 * `setImmediate`. Each `publish` resolves when the request carrying its messages is acknowledged
 * and rejects when it fails (its messages may then be retried by the caller, as with the plain
 * publisher). Ordering is the port's: the messages of one call keep their order, and a publish
 * started after another resolved is sent after it; concurrent publishes have no order between them.
 */
import type { EventPublisher, OutgoingMessage } from '../../libs/ports/event-bus.js';

interface Pending {
  readonly topic: string;
  readonly messages: readonly OutgoingMessage[];
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export function coalescingPublisher(inner: EventPublisher): EventPublisher {
  let queue: Pending[] = [];
  let flushing = false;

  const flush = async (): Promise<void> => {
    const batch = queue;
    queue = [];
    const byTopic = new Map<string, Pending[]>();
    for (const p of batch) {
      const list = byTopic.get(p.topic);
      if (list === undefined) byTopic.set(p.topic, [p]);
      else list.push(p);
    }
    await Promise.all(
      [...byTopic].map(([topic, list]) =>
        inner
          .publish(
            topic,
            list.flatMap((p) => p.messages),
          )
          .then(
            () => list.forEach((p) => p.resolve()),
            (error: unknown) => list.forEach((p) => p.reject(error)),
          ),
      ),
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
      return new Promise<void>((resolve, reject) => {
        queue.push({ topic, messages, resolve, reject });
        kick();
      });
    },
  };
}

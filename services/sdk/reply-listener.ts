import { ToolgateError } from '../../libs/core/errors.js';
import type { BusLogger } from '../../libs/bus/logger.js';
import type { ToolCallResultEvent } from '../../libs/events/contracts.js';
import type { BatchHandler, EventSubscriber, Subscription } from '../../libs/ports/event-bus.js';
import type { EventCodec } from '../../libs/events/event-codec.js';

/** Where one client instance reads its results. */
export interface ReplyAddress {
  readonly topic: string;
  /** This instance's partition of the results topic (its reply slot). */
  readonly partition: number;
  /** The consumer group of this instance alone. */
  readonly groupId: string;
}

/**
 * Joins the instance's own consumer group with static assignment of its one reply partition, so it
 * fetches and decodes only results addressed to it (see ROUTING.md), and hands each decoded result
 * to `deliver`.
 *
 * - A group that never committed starts at the end of the partition: an instance has nothing to
 *   wait for before its first publish. A restarted instance resumes from its committed offset.
 * - Malformed bytes are logged and skipped: they can never decode, and stalling the partition would
 *   cut off every later result.
 * - A schema registry that cannot be reached leaves the rest of the batch unmarked, so it is
 *   delivered again: results are never dropped for an outage.
 * - Every handled message is marked done at once; the inbox keeps what matters in memory.
 *
 * Resolves once the partition is assigned and its start position fixed: results of calls published
 * after that are never missed.
 */
export function listenForReplies(
  subscriber: EventSubscriber,
  codec: EventCodec,
  address: ReplyAddress,
  deliver: (event: ToolCallResultEvent) => void,
  logger: BusLogger,
): Promise<Subscription> {
  const handler: BatchHandler = async (batch, control) => {
    for (const message of batch.messages) {
      if (control.isStale()) return;
      let event: ToolCallResultEvent;
      try {
        event = await codec.decode('results', message.value);
      } catch (err) {
        if (err instanceof ToolgateError && err.code === 'DEPENDENCY_UNAVAILABLE') {
          logger.warn(
            { topic: batch.topic, partition: batch.partition, offset: message.offset },
            'schema registry unavailable; the result will be read again',
          );
          return;
        }
        logger.error(
          { topic: batch.topic, partition: batch.partition, offset: message.offset, err },
          'skipping a results message that cannot be decoded',
        );
        control.markDone(message.offset);
        continue;
      }
      try {
        deliver(event);
      } catch (err) {
        logger.error({ callId: event.callId, err }, 'handling a result failed');
      }
      control.markDone(message.offset);
    }
  };
  return subscriber.subscribe(
    {
      groupId: address.groupId,
      topics: [address.topic],
      fromBeginning: false,
      partitions: [address.partition],
    },
    handler,
  );
}

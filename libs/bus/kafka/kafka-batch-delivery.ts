import type { EachBatchPayload } from 'kafkajs';
import type { BatchHandler, BusMessage } from '../../ports/event-bus.js';
import { createBatchControl } from '../batch-control.js';
import { BatchProgress } from '../batch-progress.js';
import type { BusLogger } from '../logger.js';
import { OffsetTracker } from '../offset-tracker.js';
import { pause } from '../pause.js';
import { isMembershipError } from './kafka-errors.js';
import type { FetchedBatch, KafkaDelivery } from './kafka-delivery.js';
import { toBusMessage } from './kafka-message.js';

/** The settings batch delivery reads. */
export interface BatchDeliverySettings {
  readonly heartbeatIntervalMs: number;
  readonly commitIntervalMs: number;
  readonly redeliveryDelayMs: number;
}

/**
 * Batch delivery (EventSubscriber.subscribe): the handler gets each fetched batch and kafkajs
 * fetches again only after it returns, so a batch that runs long holds the fetch of every
 * partition this member reads from the same broker. Right for consumers whose messages are quick
 * (audit sink, reconciler, reply listeners); the executor uses keyed delivery.
 *
 * - The read position moves with `resolveOffset` only over the finished prefix, and commits of
 *   exactly that prefix go out while the batch runs and once more before the handler's batch is
 *   given back (BatchProgress). kafkajs' auto-commit would commit the same resolved offsets, but at
 *   moments the adapter does not see, and a failed auto-commit surfaces as a consumer error instead
 *   of a logged, harmless redelivery.
 * - A timer heartbeats while a batch runs (kafkajs only heartbeats between batches).
 * - When a heartbeat or commit answers that the group is rebalancing, every running batch turns
 *   stale. kafkajs rejoins only after every handler of the fetch has returned, so a partition is
 *   never handled by two members as long as running messages finish within the rebalance timeout.
 */
export class KafkaBatchDelivery implements KafkaDelivery {
  constructor(
    private readonly handler: BatchHandler,
    readonly partitionsConcurrently: number,
    private readonly settings: BatchDeliverySettings,
    private readonly groupId: string,
    private readonly logger: BusLogger,
  ) {}

  async handle(payload: EachBatchPayload, fetched: FetchedBatch): Promise<void> {
    const { batch } = payload;
    const { topic, partition } = batch;
    const { floor, signal } = fetched;
    const tracker = new OffsetTracker(
      batch.messages.map((m) => m.offset),
      String(BigInt(batch.lastOffset()) + 1n),
    );
    const progress = new BatchProgress(
      tracker,
      {
        advance: (_position, lastFinished) => payload.resolveOffset(lastFinished),
        commit: (position) =>
          payload.commitOffsetsIfNecessary({
            topics: [{ topic, partitions: [{ partition, offset: position }] }],
          }),
      },
      {
        commitIntervalMs: this.settings.commitIntervalMs,
        onCommitError: (error, position) => {
          if (isMembershipError(error)) fetched.revoke(error);
          this.logger.warn(
            { err: error, groupId: this.groupId, topic, partition, position },
            'commit failed',
          );
        },
      },
    );
    const deliver: BusMessage[] = [];
    for (const message of batch.messages) {
      if (floor !== undefined && BigInt(message.offset) < floor) progress.markDone(message.offset);
      else deliver.push(toBusMessage(topic, partition, message));
    }

    const timer = setInterval(() => void fetched.heartbeat(), this.settings.heartbeatIntervalMs);
    let failed = false;
    try {
      if (deliver.length > 0) {
        const control = createBatchControl(progress, signal, fetched.heartbeat);
        await this.handler({ topic, partition, messages: deliver }, control);
      }
    } catch (error) {
      failed = true;
      this.logger.error(
        { err: error, groupId: this.groupId, topic, partition, firstOffset: deliver[0]?.offset },
        'batch handler rejected; unfinished messages will be delivered again',
      );
    } finally {
      clearInterval(timer);
    }
    await progress.close();
    if ((failed || !progress.hasProgressed()) && !tracker.isComplete()) {
      await pause(this.settings.redeliveryDelayMs, signal);
    }
  }

  // A batch handler learns of rebalances and stops through its batch's stale signal.
  onRebalancing(): void {}
  onAssignment(): void {}
  onAlive(): void {}
  stop(): Promise<void> {
    return Promise.resolve();
  }
}

import type { EachBatchPayload } from 'kafkajs';
import type { TopicPartition } from '../../ports/event-bus.js';

/** What the subscription knows about a fetched batch when it hands it to its delivery. */
export interface FetchedBatch {
  /** Messages below this offset predate the group's pinned start: finished without delivery. */
  readonly floor: bigint | undefined;
  /** Aborted when this generation's partitions are revoked or the subscription stops. */
  readonly signal: AbortSignal;
  /** Heartbeats through kafkajs; never rejects (a membership error revokes the generation). */
  readonly heartbeat: () => Promise<void>;
  /** Revokes the generation (a commit answered that the group is rebalancing). */
  readonly revoke: (reason: unknown) => void;
}

/**
 * How a {@link KafkaSubscription} hands fetched batches to its handler: one batch at a time per
 * partition, the fetch waiting for it (batch delivery), or message by message into per-partition
 * lanes that fetching does not wait for (keyed delivery). The subscription owns the consumer, its
 * membership and its replacement; the delivery owns what happens to messages.
 */
export interface KafkaDelivery {
  /** kafkajs' partitionsConsumedConcurrently for this delivery. */
  readonly partitionsConcurrently: number;
  /**
   * The consumer's longest fetch wait, when the delivery needs it shorter than the bus's: kafkajs
   * also sleeps this long, without fetching, whenever every partition of the member is paused.
   */
  readonly maxWaitTimeMs?: number;
  /** Handles one fetched batch; kafkajs fetches that partition again only after it resolves. */
  handle(payload: EachBatchPayload, batch: FetchedBatch): Promise<void>;
  /** A rebalance began, or the member's consumer crashed: start nothing new. */
  onRebalancing(): void;
  /** The member joined a generation with this assignment. */
  onAssignment(assignment: readonly TopicPartition[]): void;
  /** The member is alive in its group (a heartbeat or a join succeeded). */
  onAlive(): void;
  /** The subscription is stopping: finish and commit what runs; the consumer is still connected. */
  stop(): Promise<void>;
}

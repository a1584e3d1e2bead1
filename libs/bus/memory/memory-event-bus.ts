import type { Clock } from '../../core/clock.js';
import type {
  BatchHandler,
  EventBus,
  KeyedSubscribeOptions,
  MessageHandler,
  OutgoingMessage,
  SubscribeOptions,
  TopicSpec,
} from '../../ports/event-bus.js';
import { silentBusLogger, type BusLogger } from '../logger.js';
import { partitionForKey } from '../partitioner.js';
import { DEFAULT_MAX_BUFFERED } from '../keyed-lanes.js';
import {
  validateKeyedSubscribeOptions,
  validateOutgoing,
  validateStaticPartitions,
  validateSubscribeOptions,
  validateTopicSpecs,
} from '../validate.js';
import { MemoryGroup } from './memory-group.js';
import { MemoryTopic } from './memory-log.js';
import { MemoryMember, type MemoryDelivery, type MemorySubscription } from './memory-member.js';

/** Tuning of {@link MemoryEventBus}; every duration in milliseconds. */
export interface MemoryEventBusOptions {
  /** Source of message timestamps (default: the system clock). Pacing uses real timers. */
  readonly clock?: Pick<Clock, 'now'>;
  readonly logger?: BusLogger;
  /** Most messages per delivered batch (default 500). */
  readonly maxBatchSize?: number;
  /** See BatchControl.markDone (default 1000). */
  readonly commitIntervalMs?: number;
  /** Pause before redelivering a batch that made no progress (default 100). */
  readonly redeliveryDelayMs?: number;
}

/**
 * The in-process event bus for the embedded mode: the same semantics as the Kafka adapter for
 * everything the product relies on — murmur2 key partitioning, per-partition order, consumer
 * groups with committed offsets, redelivery of whatever was not committed, eager rebalances that
 * never give a partition two owners, headers, earliest/latest start for new groups.
 *
 * Publishing is atomic per call and "durable" once the call resolves (for the life of the
 * process). All messages are retained; nothing is ever deleted.
 */
export class MemoryEventBus implements EventBus {
  private readonly topics = new Map<string, MemoryTopic>();
  private readonly groups = new Map<string, MemoryGroup>();
  private readonly members = new Set<MemoryMember>();
  private readonly clock: Pick<Clock, 'now'>;
  private readonly logger: BusLogger;
  private readonly maxBatchSize: number;
  private readonly commitIntervalMs: number;
  private readonly redeliveryDelayMs: number;
  private nextMember = 0;
  private closed = false;

  constructor(options: MemoryEventBusOptions = {}) {
    this.clock = options.clock ?? { now: () => Date.now() };
    this.logger = options.logger ?? silentBusLogger;
    this.maxBatchSize = positive('maxBatchSize', options.maxBatchSize ?? 500);
    this.commitIntervalMs = nonNegative('commitIntervalMs', options.commitIntervalMs ?? 1000);
    this.redeliveryDelayMs = nonNegative('redeliveryDelayMs', options.redeliveryDelayMs ?? 100);
  }

  ensureTopics(specs: readonly TopicSpec[]): Promise<void> {
    return settle(() => {
      this.assertOpen();
      validateTopicSpecs(specs);
      for (const spec of specs) {
        const existing = this.topics.get(spec.topic);
        if (existing && existing.partitions.length !== spec.partitions) {
          throw new Error(
            `topic ${spec.topic} exists with ${existing.partitions.length} partitions, not ${spec.partitions}`,
          );
        }
      }
      for (const spec of specs) {
        if (!this.topics.has(spec.topic))
          this.topics.set(spec.topic, new MemoryTopic(spec.topic, spec.partitions));
      }
    });
  }

  publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    return settle(() => {
      this.assertOpen();
      const target = this.topic(topic);
      validateOutgoing(messages);
      // Validate everything first, then append synchronously: a call lands whole, in order.
      const count = target.partitions.length;
      const placed = messages.map((message) => message.partition ?? partitionForKey(message.key, count));
      const outside = placed.find((partition) => partition >= count);
      if (outside !== undefined) throw new RangeError(`topic ${topic} has no partition ${outside}`);
      const now = this.clock.now();
      for (const [i, message] of messages.entries()) {
        target.partition(placed[i]!).append({
          key: message.key,
          value: Buffer.from(message.value),
          headers: Object.freeze({ ...(message.headers ?? {}) }),
          timestampMs: now,
        });
      }
    });
  }

  async subscribe(options: SubscribeOptions, handler: BatchHandler): Promise<MemorySubscription> {
    this.assertOpen();
    validateSubscribeOptions(options);
    return this.join(options, { kind: 'batch', handler });
  }

  async subscribeKeyed(options: KeyedSubscribeOptions, handler: MessageHandler): Promise<MemorySubscription> {
    this.assertOpen();
    validateKeyedSubscribeOptions(options);
    return this.join(options, {
      kind: 'keyed',
      handler,
      maxConcurrency: options.maxConcurrency,
      maxBuffered: options.maxBuffered ?? DEFAULT_MAX_BUFFERED,
    });
  }

  private async join(options: SubscribeOptions, delivery: MemoryDelivery): Promise<MemorySubscription> {
    validateStaticPartitions(
      options.partitions,
      new Map(options.topics.map((name) => [name, this.topic(name).partitions.length])),
    );
    let group = this.groups.get(options.groupId);
    if (!group) {
      group = new MemoryGroup(options.groupId, (name) => this.topic(name));
      this.groups.set(options.groupId, group);
    }
    // Kafka refuses a join whose assignment protocol differs from the group's; so does this bus.
    if (!group.accepts(options.partitions !== undefined)) {
      throw new Error(`group ${options.groupId} cannot mix statically assigned and dynamic members`);
    }
    this.nextMember += 1;
    const member = new MemoryMember(
      `${options.groupId}-member-${this.nextMember}`,
      options,
      delivery,
      group,
      (name) => this.topic(name),
      {
        maxBatchSize: this.maxBatchSize,
        commitIntervalMs: this.commitIntervalMs,
        redeliveryDelayMs: this.redeliveryDelayMs,
        logger: this.logger,
      },
      (gone) => this.members.delete(gone),
    );
    this.members.add(member);
    group.join(member);
    await member.joined();
    return member;
  }

  /**
   * The group's committed offset for a partition (the next offset it will read), or undefined
   * when the group has never been assigned it. For tests and diagnostics.
   */
  committedOffset(groupId: string, topic: string, partition: number): string | undefined {
    const offset = this.groups.get(groupId)?.committedOffset(topic, partition);
    return offset === undefined ? undefined : String(offset);
  }

  /** The number of messages ever published to the partition (its end offset). */
  endOffset(topic: string, partition: number): string {
    return String(this.topic(topic).partition(partition).end());
  }

  /** Stops every remaining subscription (gracefully), then refuses further use. */
  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.members].map((m) => m.stop()));
    this.closed = true;
  }

  private topic(name: string): MemoryTopic {
    const topic = this.topics.get(name);
    if (!topic) throw new Error(`unknown topic ${JSON.stringify(name)}: create it with ensureTopics`);
    return topic;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the memory event bus is closed');
  }
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be ≥ 0`);
  return value;
}

/** Runs a synchronous step as a promise, so callers see errors as rejections like on Kafka. */
function settle(step: () => void): Promise<void> {
  try {
    step();
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

import type { Consumer, EachBatchPayload } from 'kafkajs';
import type { MessageHandler, TopicPartition } from '../../ports/event-bus.js';
import { KeyedLanes, type LaneSink } from '../keyed-lanes.js';
import type { BusLogger } from '../logger.js';
import type { FetchedBatch, KafkaDelivery } from './kafka-delivery.js';
import { toBusMessage } from './kafka-message.js';

/** The longest fetch wait of a keyed subscription's consumer (see maxWaitTimeMs below). */
const KEYED_MAX_WAIT_MS = 100;

/** The settings keyed delivery reads. */
export interface KeyedDeliverySettings {
  readonly sessionTimeoutMs: number;
  readonly commitIntervalMs: number;
  readonly maxConcurrency: number;
  readonly maxBuffered: number;
}

/**
 * Keyed delivery (KeyedSubscriber.subscribeKeyed): each fetched batch goes into its partition's
 * lane and is resolved at once, so kafkajs fetches on while messages run, and a slow message holds
 * only the later messages of its own key. Commits (the lane's lowest unfinished offset) go out
 * through the consumer, never past an unfinished message; pausing a lane's partition is the
 * backpressure.
 *
 * Rebalances: kafkajs rejoins without waiting for running messages (it has no revocation hook), so
 * on its REBALANCING event the lanes start nothing new, and on the join the lanes of partitions
 * that moved away drop their waiting messages and their commits, while their running messages
 * finish (their handlers' signals abort). The next owner may then receive a message that is still
 * running here; see KeyedSubscriber for what makes that safe.
 *
 * Zombie fence: the lanes start a message only while the member's last successful heartbeat or
 * join is less than half a session timeout old. A member cut off from the broker, or frozen and
 * resumed, stops taking work before the group can have handed its partitions to another member.
 */
export class KafkaKeyedDelivery implements KafkaDelivery {
  readonly partitionsConcurrently: number;
  /**
   * A lane that paused its partition resumes with half its bound still to run, but kafkajs, once
   * every partition of the member is paused, sleeps a whole fetch wait before it fetches again: at
   * the bus default (1 s) a member whose partitions were all paused sat idle for most of that
   * second (measured: 1,399 against 2,462 calls/s on one partition's backlog). 100 ms keeps the
   * lanes fed, for ten fetch requests a second from an idle member.
   */
  readonly maxWaitTimeMs = KEYED_MAX_WAIT_MS;
  private readonly lanes: KeyedLanes;
  private readonly sinks = new Map<string, LaneSink>();
  private aliveAtMs = Date.now();
  private heartbeat: () => Promise<void> = () => Promise.resolve();

  constructor(
    handler: MessageHandler,
    private readonly consumer: () => Consumer,
    private readonly settings: KeyedDeliverySettings,
    private readonly groupId: string,
    private readonly logger: BusLogger,
  ) {
    // Every partition's batch is handed over at once, so handing them over one at a time is enough.
    this.partitionsConcurrently = 1;
    this.lanes = new KeyedLanes(handler, {
      maxConcurrency: settings.maxConcurrency,
      maxBuffered: settings.maxBuffered,
      commitIntervalMs: settings.commitIntervalMs,
      groupId,
      logger,
      heartbeat: () => this.heartbeat(),
      mayStart: () => Date.now() - this.aliveAtMs < settings.sessionTimeoutMs / 2,
    });
  }

  handle(payload: EachBatchPayload, fetched: FetchedBatch): Promise<void> {
    const { batch } = payload;
    const { topic, partition } = batch;
    this.heartbeat = fetched.heartbeat;
    const messages = batch.messages
      .filter((m) => fetched.floor === undefined || BigInt(m.offset) >= fetched.floor)
      .map((m) => toBusMessage(topic, partition, m));
    this.lanes.deliver({ topic, partition }, messages, this.sinkFor(topic, partition));
    // Fetching moves on at once: what is unfinished lives in the lane, and the committed offset
    // (not kafkajs' read position) is what a new owner starts from.
    payload.resolveOffset(batch.lastOffset());
    return Promise.resolve();
  }

  onRebalancing(): void {
    this.lanes.hold();
  }

  onAssignment(assignment: readonly TopicPartition[]): void {
    this.onAlive();
    void this.lanes.assign(assignment, false);
  }

  onAlive(): void {
    this.aliveAtMs = Date.now();
    this.lanes.wake();
  }

  stop(): Promise<void> {
    return this.lanes.stop();
  }

  /** How many messages run now (for tests and diagnostics). */
  runningCount(): number {
    return this.lanes.runningCount();
  }

  private sinkFor(topic: string, partition: number): LaneSink {
    const key = `${topic}\u0000${partition}`;
    let sink = this.sinks.get(key);
    if (sink === undefined) {
      const tp = [{ topic, partitions: [partition] }];
      sink = {
        commit: (position) => this.consumer().commitOffsets([{ topic, partition, offset: position }]),
        throttle: (paused) => {
          try {
            if (paused) this.consumer().pause(tp);
            else this.consumer().resume(tp);
          } catch (error) {
            // A consumer that is not running (replaced, stopping) has nothing to pause.
            this.logger.debug({ err: error, groupId: this.groupId, topic, partition }, 'could not throttle');
          }
        },
      };
      this.sinks.set(key, sink);
    }
    return sink;
  }
}

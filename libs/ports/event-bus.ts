/**
 * The event bus: keyed, partitioned, ordered logs with consumer groups (Kafka's model). Two adapters
 * implement it with the same observable semantics: Kafka (production) and an in-process memory bus
 * (embedded mode, agent developers' tests). Code above the bus imports only these types.
 *
 * Delivery is at-least-once: a message is delivered again until its group commits past it, so every
 * handler must be idempotent (the executor's idempotency claim makes one effect out of many
 * deliveries).
 */

/** A message to publish. `key` picks the partition: equal keys land on one partition, in order. */
export interface OutgoingMessage {
  readonly key: string;
  readonly value: Buffer;
  /** Small string metadata (content type, schema id, trace id). Never secrets. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Sends the message to exactly this partition instead of the key's. For replies addressed to one
   * requester's partition (`replyTopic`, `replyPartition`); ordering then holds per partition, not
   * per key. Rejects (RangeError) when the topic has no such partition.
   */
  readonly partition?: number;
}

/** A delivered message. `offset` is a decimal int64 string, increasing within its partition. */
export interface BusMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string;
  readonly value: Buffer;
  /** When a header key repeats on the wire, the last value wins. */
  readonly headers: Readonly<Record<string, string>>;
  /** Append time at the broker (memory bus: its clock), epoch milliseconds. */
  readonly timestampMs: number;
}

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/**
 * Publishes keyed messages.
 *
 * Partitioning: a key always maps to the same partition of a topic (Kafka's murmur2 default
 * partitioner, reproduced by `partitionForKey` in libs/bus), so every adapter places a key on the
 * same partition number.
 *
 * Ordering: messages of one `publish` call keep their array order per key, and so do messages of
 * calls made one after another (each awaited before the next). Concurrent calls carrying the same
 * key have no defined order between them.
 */
export interface EventPublisher {
  /**
   * Resolves once every message is durably acknowledged (Kafka: idempotent producer, acks=all, so a
   * retried send never duplicates or reorders). Rejects when the topic does not exist. While the
   * broker is unreachable it keeps retrying; a caller that needs a deadline must race it, knowing the
   * messages may still be written afterwards.
   */
  publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void>;
}

/** A run of consecutive messages of one partition, in offset order. */
export interface MessageBatch {
  readonly topic: string;
  readonly partition: number;
  readonly messages: readonly BusMessage[];
}

/**
 * What a batch handler uses to report progress. Only one batch per partition is in flight in a
 * group at any time, so a partition's messages are never handled by two members at once.
 */
export interface BatchControl {
  /**
   * Marks one message of this batch as finished (successfully or not). Calls may come in any order;
   * the committed position only moves over the contiguous finished prefix, i.e. to the lowest
   * unfinished offset (all finished: past the last message). Commits are sent at most every
   * `commitIntervalMs` while the batch runs and always once more when the handler returns, before
   * the partition's next batch is delivered or the partition is handed to another member.
   * Throws RangeError for an offset that is not in this batch. After the handler has returned it
   * has no effect.
   */
  markDone(offset: string): void;
  /**
   * Tells the group this member is alive. The adapters already heartbeat while a batch runs; call
   * it from long loops anyway. Never rejects; when the group turns out to be rebalancing, the batch
   * becomes stale.
   */
  heartbeat(): Promise<void>;
  /**
   * True once the partition is being revoked (a rebalance) or the subscription is stopping: start
   * no new message; let the ones running finish, mark them, and return. Messages not marked done
   * are delivered again, to this member or to the partition's next owner.
   */
  isStale(): boolean;
  /** Aborted exactly when `isStale()` turns true, for code that waits. */
  readonly signal: AbortSignal;
}

/**
 * Handles one batch. Return once every message has been marked done, or as soon as possible after
 * the batch turned stale. Messages of the batch that are not covered by the finished prefix when it
 * returns are delivered again (after `redeliveryDelayMs` when the batch made no progress at all).
 * A handler that rejects is logged and treated as having returned; handlers should not throw.
 */
export type BatchHandler = (batch: MessageBatch, control: BatchControl) => Promise<void>;

export interface SubscribeOptions {
  /** Members with the same group id share the partitions; each group receives every message. */
  readonly groupId: string;
  readonly topics: readonly string[];
  /**
   * Where a partition starts when the group has never committed on it: the earliest retained
   * message (true) or the end of the log as of the moment the partition is first assigned to the
   * group (false). That start position is committed at once, so later members continue from it and
   * nothing published after `subscribe` resolved is skipped. Ignored once the group has committed.
   */
  readonly fromBeginning: boolean;
  /** How many of this member's partitions are handled at the same time (default 1). */
  readonly partitionsConcurrently?: number;
  /**
   * Static assignment: this member gets exactly these partitions of each of its topics, whatever
   * else is in the group, and never any other partition. Meant for single-member groups that own a
   * fixed slice of a topic (a requester reading only its reply partition). Every listed partition
   * must exist in every topic (RangeError otherwise); a partition two static members of one group
   * both list goes to one of them only. A group must not mix static and dynamic members (Kafka
   * refuses the join: the members' assignment protocols differ).
   */
  readonly partitions?: readonly number[];
}

/** One member of a consumer group. */
export interface Subscription {
  /**
   * Leaves the group gracefully: marks running batches stale, waits for their handlers to return,
   * commits the finished prefixes, then leaves so the partitions are reassigned. Idempotent.
   */
  stop(): Promise<void>;
  /** The partitions this member owns in the current generation ([] while stopped). */
  assignment(): readonly TopicPartition[];
}

export interface EventSubscriber {
  /**
   * Joins `groupId` as a new member. Resolves once the member has its first assignment and its
   * start positions are fixed: every message published afterwards reaches the group. Topics must
   * exist. Rebalances are eager: when a member joins or leaves, every member's batches turn stale,
   * all members finish their running messages and commit, and only then are partitions reassigned —
   * so a partition (and every key on it) is never handled by two members at once, provided running
   * messages finish within the adapter's rebalance timeout.
   */
  subscribe(options: SubscribeOptions, handler: BatchHandler): Promise<Subscription>;
}

/** What a keyed subscription hands its handler with each message. */
export interface MessageContext {
  /**
   * Aborted when this member stops owning the message's partition (it was revoked, the member
   * crashed) or the subscription stops: start nothing new for this message, stop waiting, and
   * return. Not aborted when a rebalance merely begins: a running message is never interrupted
   * by one.
   */
  readonly signal: AbortSignal;
  /** Tells the group this member is alive. Never rejects. */
  heartbeat(): Promise<void>;
}

/**
 * Handles one message of a keyed subscription. Resolve `true` when the message is finished
 * (successfully or not): its offset may then be committed. Resolve `false` only when giving up
 * because `context.signal` aborted: the message stays unfinished, the committed offset stays at or
 * below it, and it is delivered again to the partition's next owner (or to this member after it
 * restarts). A handler that rejects is logged and its message counts as finished: one bad message
 * must not stall its partition, so handlers turn failures into results themselves.
 */
export type MessageHandler = (message: BusMessage, context: MessageContext) => Promise<boolean>;

/** A keyed subscription: SubscribeOptions (less the batch concurrency) plus its bounds. */
export interface KeyedSubscribeOptions extends Omit<SubscribeOptions, 'partitionsConcurrently'> {
  /** How many messages this member runs at once, across all of its partitions (≥ 1). */
  readonly maxConcurrency: number;
  /**
   * How many delivered messages one partition may hold unfinished (running or waiting for their
   * key) before the member stops fetching that partition (default 1000, ≥ 1). Fetching resumes
   * once fewer than half that many are left.
   */
  readonly maxBuffered?: number;
}

/**
 * Consumes a topic message by message with per-key order and no head-of-line blocking — what the
 * executor needs, where one call may run for seconds:
 *
 * - messages with the same key run one at a time, in offset order, across fetches;
 * - messages with other keys, on the same partition or any other, never wait for them: fetching
 *   goes on while messages run, up to `maxConcurrency` at once (oldest ready first, partitions
 *   taken in turn) and `maxBuffered` held per partition;
 * - the committed offset of a partition is its lowest unfinished message, so a crash redelivers
 *   every unfinished message and nothing below it;
 * - only the partition's owner commits: a member drops its commits for a partition it lost.
 *
 * Rebalances: when a rebalance begins, the member starts no new message; running ones go on.
 * After the new assignment, partitions it kept continue where they were (messages it already holds
 * are not delivered twice); for partitions it lost, waiting messages are dropped and running ones'
 * signals abort. The Kafka adapter cannot hold a rebalance until running messages finish (kafkajs
 * has no revocation hook), so the next owner may receive a message the previous owner is still
 * running: handlers must make that safe (the executor's idempotency claim makes the redelivery wait
 * for the running call, and keeps the key's later messages waiting behind it). A member that has
 * not been able to heartbeat for half the session timeout starts nothing new until it can again,
 * so a member cut off from the broker stops taking work before its partitions are handed over.
 * The memory adapter drains running messages before every reassignment.
 */
export interface KeyedSubscriber {
  /** Joins `groupId` as a new member; resolves like {@link EventSubscriber.subscribe}. */
  subscribeKeyed(options: KeyedSubscribeOptions, handler: MessageHandler): Promise<Subscription>;
}

export interface TopicSpec {
  readonly topic: string;
  readonly partitions: number;
  /** Kafka only; default: the broker's default replication factor. */
  readonly replicationFactor?: number;
  /**
   * Kafka only: topic configs a topic is created with (e.g. `message.timestamp.type`); an existing
   * topic's configs are never changed. Other buses ignore them.
   */
  readonly configs?: Readonly<Record<string, string>>;
}

/** The topic administration services need at start-up. */
export interface TopicAdmin {
  /**
   * Creates the topics that do not exist yet. Idempotent and safe to race. Throws when an existing
   * topic has a different partition count: the key → partition mapping (and so per-key order)
   * depends on it, and changing it is a deliberate operation, not a start-up side effect.
   */
  ensureTopics(specs: readonly TopicSpec[]): Promise<void>;
}

/** Everything one transport offers, as wired in a service's main.ts. */
export interface EventBus extends EventPublisher, EventSubscriber, KeyedSubscriber, TopicAdmin {
  /** Releases connections. Stop subscriptions first; publishing after close rejects. */
  close(): Promise<void>;
}

import { Kafka, Partitioners, type Admin, type Consumer, type KafkaConfig, type Producer } from 'kafkajs';
import type {
  BatchHandler,
  EventBus,
  KeyedSubscribeOptions,
  MessageHandler,
  OutgoingMessage,
  SubscribeOptions,
  Subscription,
  TopicSpec,
} from '../../ports/event-bus.js';
import { silentBusLogger, type BusLogger } from '../logger.js';
import { DEFAULT_MAX_BUFFERED } from '../keyed-lanes.js';
import {
  validateKeyedSubscribeOptions,
  validateStaticPartitions,
  validateSubscribeOptions,
} from '../validate.js';
import { KafkaBatchDelivery } from './kafka-batch-delivery.js';
import type { KafkaDelivery } from './kafka-delivery.js';
import { KafkaKeyedDelivery } from './kafka-keyed-delivery.js';
import { kafkaLogCreator, toKafkaLogLevel, type KafkaLogLevel } from './kafka-log-creator.js';
import { KafkaPublisher } from './kafka-publisher.js';
import {
  KafkaSubscription,
  type KafkaConsumerSettings,
  type MembershipOptions,
} from './kafka-subscription.js';
import { KafkaTopicAdmin } from './kafka-topic-admin.js';
import { fixKafkaJsIdleTimer } from './kafkajs-idle-timer.js';

fixKafkaJsIdleTimer();

/** Connection and consumer tuning of {@link KafkaEventBus}; every duration in milliseconds. */
export interface KafkaEventBusOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly logger?: BusLogger;
  /** What kafkajs itself logs (default 'warn'). */
  readonly logLevel?: KafkaLogLevel;
  /** TLS / SASL and other connection settings, passed to kafkajs as they are. */
  readonly connection?: Pick<KafkaConfig, 'ssl' | 'sasl' | 'connectionTimeout' | 'requestTimeout'>;
  /** Broker-side liveness window (default 30000; the broker enforces its min/max). */
  readonly sessionTimeoutMs?: number;
  /**
   * How long the group waits for members to rejoin during a rebalance (default 60000). A batch
   * subscription rejoins only once its running batches returned, so this must exceed the longest a
   * batch can run, or a partition can be handed over while its old owner is still working. A keyed
   * subscription rejoins at once (see KeyedSubscriber).
   */
  readonly rebalanceTimeoutMs?: number;
  /** Default 3000; keep it well under a third of the session timeout. */
  readonly heartbeatIntervalMs?: number;
  /**
   * Longest fetch wait when a partition is idle (default 1000; kafkajs' own is 5000). An idle
   * member notices a rebalance, and a stop completes, within about this long. Keyed subscriptions
   * use at most 100 ms: kafkajs sleeps this long whenever all of a member's partitions are paused.
   */
  readonly maxWaitTimeMs?: number;
  /** Default 1 MiB. */
  readonly maxBytesPerPartition?: number;
  /** See BatchControl.markDone (default 1000). */
  readonly commitIntervalMs?: number;
  /** Pause before a batch that made no progress is delivered again (default 100). */
  readonly redeliveryDelayMs?: number;
}

/**
 * The Kafka transport: one kafkajs client, one idempotent producer, one admin, and one kafkajs
 * consumer per subscription.
 *
 * Producer: `idempotent: true` with acks=-1 (all in-sync replicas) and `maxInFlightRequests: 1`.
 * Kafka allows up to 5 in flight with idempotence, but only because the Java client rewrites
 * sequence numbers after a failure; kafkajs does not, and already serializes an idempotent
 * producer's requests per broker (its EOS broker lock), so 1 costs nothing and leaves no doubt
 * about ordering. The partitioner is kafkajs' Java-compatible murmur2 (`partitionForKey`).
 * Its retries never end and wait at most 1 s apart: with kafkajs' default cap (30 s) the doubling
 * waits reach 10–20 s while a dead leader is being replaced (~9 s), and publishing stays stopped
 * that long after the new leader is there. The per-broker lock does not stop two sends to one
 * partition from queueing behind a failed one, which could reuse its rolled-back sequence numbers:
 * `KafkaPublisher` keeps one send in flight per topic for that reason.
 *
 * Loading this module stops kafkajs' idle 1 ms timer loop (see fixKafkaJsIdleTimer).
 */
export class KafkaEventBus implements EventBus {
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  private readonly admin: Admin;
  private readonly topicAdmin: KafkaTopicAdmin;
  private readonly publisher: KafkaPublisher;
  private readonly settings: KafkaConsumerSettings;
  private readonly logger: BusLogger;
  private readonly subscriptions = new Set<KafkaSubscription>();
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(options: KafkaEventBusOptions) {
    this.logger = options.logger ?? silentBusLogger;
    this.kafka = new Kafka({
      ...options.connection,
      clientId: options.clientId,
      brokers: [...options.brokers],
      logLevel: toKafkaLogLevel(options.logLevel ?? 'warn'),
      logCreator: kafkaLogCreator(this.logger),
    });
    this.producer = this.kafka.producer({
      idempotent: true,
      retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 1_000 },
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    this.admin = this.kafka.admin();
    this.topicAdmin = new KafkaTopicAdmin(this.admin);
    this.publisher = new KafkaPublisher(
      this.producer,
      () => this.connect(),
      (topic) => this.topicAdmin.partitionCount(topic),
    );
    this.settings = {
      sessionTimeoutMs: options.sessionTimeoutMs ?? 30_000,
      rebalanceTimeoutMs: options.rebalanceTimeoutMs ?? 60_000,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 3_000,
      maxWaitTimeMs: options.maxWaitTimeMs ?? 1_000,
      maxBytesPerPartition: options.maxBytesPerPartition ?? 1_048_576,
      commitIntervalMs: options.commitIntervalMs ?? 1_000,
      redeliveryDelayMs: options.redeliveryDelayMs ?? 100,
    };
  }

  /** Connects the producer and the admin client; called lazily by the other methods. */
  connect(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the kafka event bus is closed'));
    this.connecting ??= Promise.all([this.producer.connect(), this.admin.connect()]).then(
      () => undefined,
      (error: unknown) => {
        this.connecting = undefined;
        throw error;
      },
    );
    return this.connecting;
  }

  publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the kafka event bus is closed'));
    return this.publisher.publish(topic, messages);
  }

  async ensureTopics(specs: readonly TopicSpec[]): Promise<void> {
    await this.connect();
    await this.topicAdmin.ensureTopics(specs);
  }

  /** The effective value of one config of an existing topic (see `KafkaTopicAdmin.topicConfig`). */
  async topicConfig(topic: string, name: string): Promise<string | undefined> {
    await this.connect();
    return this.topicAdmin.topicConfig(topic, name);
  }

  async subscribe(options: SubscribeOptions, handler: BatchHandler): Promise<Subscription> {
    validateSubscribeOptions(options);
    return this.join(
      options,
      () =>
        new KafkaBatchDelivery(
          handler,
          options.partitionsConcurrently ?? 1,
          this.settings,
          options.groupId,
          this.logger,
        ),
    );
  }

  async subscribeKeyed(options: KeyedSubscribeOptions, handler: MessageHandler): Promise<Subscription> {
    validateKeyedSubscribeOptions(options);
    return this.join(
      options,
      (consumer) =>
        new KafkaKeyedDelivery(
          handler,
          consumer,
          {
            sessionTimeoutMs: this.settings.sessionTimeoutMs,
            commitIntervalMs: this.settings.commitIntervalMs,
            maxConcurrency: options.maxConcurrency,
            maxBuffered: options.maxBuffered ?? DEFAULT_MAX_BUFFERED,
          },
          options.groupId,
          this.logger,
        ),
    );
  }

  /** Joins the group with one new member whose fetched batches go to the delivery. */
  private async join(
    options: MembershipOptions,
    createDelivery: (consumer: () => Consumer) => KafkaDelivery,
  ): Promise<Subscription> {
    await this.connect();
    const counts = new Map<string, number>();
    for (const topic of options.topics) {
      const count = await this.topicAdmin.partitionCount(topic);
      if (count === undefined) {
        throw new Error(`unknown topic ${JSON.stringify(topic)}: create it with ensureTopics`);
      }
      counts.set(topic, count);
    }
    validateStaticPartitions(options.partitions, counts);
    const subscription = new KafkaSubscription(
      this.kafka,
      this.admin,
      options,
      createDelivery,
      this.settings,
      this.logger,
      (gone) => this.subscriptions.delete(gone),
    );
    this.subscriptions.add(subscription);
    try {
      await subscription.start();
    } catch (error) {
      await subscription.stop();
      throw error;
    }
    return subscription;
  }

  /** Stops every remaining subscription, then disconnects the producer and the admin client. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    if (this.connecting) {
      await this.connecting.catch(() => undefined);
      await Promise.allSettled([this.producer.disconnect(), this.admin.disconnect()]);
    }
  }
}

import type { Admin, Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { KafkaBatchDelivery } from '../../../libs/bus/kafka/kafka-batch-delivery.js';
import { KafkaSubscription, type KafkaConsumerSettings } from '../../../libs/bus/kafka/kafka-subscription.js';
import type { BusLogger } from '../../../libs/bus/logger.js';

/**
 * What kafkajs does after a crash is its decision (restart or stop for good); what the adapter does
 * then is ours. These tests drive a stand-in for the kafkajs client through the two kinds of crash
 * and count the consumers the subscription creates. Recovery on a real broker is covered by the
 * chaos suite's broker restart.
 */
const EVENTS = { GROUP_JOIN: 'consumer.group_join', CRASH: 'consumer.crash' } as const;
const TOPIC = 'calls';

class StandInConsumer {
  readonly events = EVENTS;
  readonly listeners = new Map<string, Array<(e: { payload: unknown }) => void>>();
  connects = 0;
  disconnects = 0;
  failConnect = false;

  on(event: string, listener: (e: { payload: unknown }) => void): void {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
  }
  emit(event: string, payload: unknown): void {
    for (const l of this.listeners.get(event) ?? []) l({ payload });
  }
  connect(): Promise<void> {
    this.connects += 1;
    return this.failConnect ? Promise.reject(new Error('broker unreachable')) : Promise.resolve();
  }
  subscribe(): Promise<void> {
    return Promise.resolve();
  }
  run(): Promise<void> {
    this.emit(EVENTS.GROUP_JOIN, { memberAssignment: { [TOPIC]: [0, 1] } });
    return Promise.resolve();
  }
  disconnect(): Promise<void> {
    this.disconnects += 1;
    return Promise.resolve();
  }
  crash(restart: boolean): void {
    this.emit(EVENTS.CRASH, { error: new Error('group authorization failed'), restart });
  }
}

const SETTINGS: KafkaConsumerSettings = {
  sessionTimeoutMs: 6_000,
  rebalanceTimeoutMs: 10_000,
  heartbeatIntervalMs: 500,
  maxWaitTimeMs: 100,
  maxBytesPerPartition: 1_048_576,
  commitIntervalMs: 100,
  redeliveryDelayMs: 10,
};

async function started(options: { failSecondConnect?: boolean } = {}) {
  const consumers: StandInConsumer[] = [];
  const logged: string[] = [];
  const kafka = {
    consumer: () => {
      const c = new StandInConsumer();
      c.failConnect = options.failSecondConnect === true && consumers.length === 1;
      consumers.push(c);
      return c;
    },
  } as unknown as Kafka;
  const note = (_obj: object, msg?: string): void => void logged.push(msg ?? '');
  const logger: BusLogger = { debug: note, info: note, warn: note, error: note };
  const subscription = new KafkaSubscription(
    kafka,
    {} as Admin,
    { groupId: 'executors', topics: [TOPIC], fromBeginning: true },
    () => new KafkaBatchDelivery(() => Promise.resolve(), 1, SETTINGS, 'executors', logger),
    SETTINGS,
    logger,
    () => undefined,
  );
  await subscription.start();
  return { subscription, consumers, logged };
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('KafkaSubscription after kafkajs gives up on its consumer', () => {
  it('replaces a consumer stopped for good with a new member of the same group', async () => {
    const { subscription, consumers, logged } = await started();
    expect(subscription.assignment()).toHaveLength(2);

    consumers[0]!.crash(false);
    expect(subscription.assignment()).toEqual([]);
    await until(() => consumers.length === 2 && subscription.assignment().length === 2, 'a new consumer');
    expect(consumers[0]!.disconnects).toBe(1);
    expect(consumers[1]!.connects).toBe(1);
    expect(logged).toContain('kafka consumer stopped for good; replacing it');

    // Events of the replaced consumer no longer move this member.
    consumers[0]!.crash(false);
    expect(subscription.assignment()).toHaveLength(2);
    await subscription.stop();
    expect(consumers).toHaveLength(2);
    expect(consumers[1]!.disconnects).toBe(1);
  });

  it('leaves a retriable crash to kafkajs, which restarts the same consumer', async () => {
    const { subscription, consumers } = await started();
    consumers[0]!.crash(true);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(consumers).toHaveLength(1);
    expect(consumers[0]!.disconnects).toBe(0);
    await subscription.stop();
  });

  it('keeps trying when the replacement cannot start, with a longer wait each time', async () => {
    const { subscription, consumers, logged } = await started({ failSecondConnect: true });
    consumers[0]!.crash(false);
    await until(() => consumers.length === 3 && subscription.assignment().length === 2, 'a third consumer');
    expect(consumers[1]!.connects).toBe(1);
    expect(logged).toContain('replacement consumer did not start');
    await subscription.stop();
  });

  it('creates no consumer once the subscription is stopping', async () => {
    const { subscription, consumers } = await started();
    consumers[0]!.crash(false);
    await subscription.stop();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(consumers).toHaveLength(1);
  });
});

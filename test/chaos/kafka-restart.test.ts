import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import { PARTITIONS, type ExecutorStack } from '../integration/executor/executor-stack.js';
import { testKafkaBus } from '../integration/executor/test-parts.js';
import type { ChaosPipeline } from './chaos-pipeline.js';
import { chaosScale, scaledTimeout } from './chaos-scale.js';
import * as ledger from './ledger-scenario.js';
import { startPrivateKafka, type PrivateKafka } from './private-kafka.js';
import { logTail } from './log-tail.js';
import { collectTopic, privateReader, type CollectorSource } from './topic-collector.js';

/**
 * Scenario 2, the Kafka part: a broker of the suite's own (never the shared 19092 one) is stopped
 * under load and started again on the same storage, while one executor keeps running. Producers
 * retry failed publishes (a publish that failed after the broker took it becomes a replay, which
 * idempotency absorbs). Checks: 0 duplicate effects, every call answered or an open case, sentinel
 * calls after the restart succeed on the same executor.
 */
const SCALE = chaosScale();
const CALLS = SCALE.outageCalls;

let stack: ExecutorStack;
let broker: PrivateKafka;
let bus: KafkaEventBus;
let source: CollectorSource;
let built: ChaosPipeline;
// Kept quiet, but summarised when the scenario times out.
const busLog = logTail('bus (executor and publisher)');
const executorLog = logTail('executor');

beforeAll(async () => {
  stack = await ledger.openStack('chaos_kafka');
  broker = await startPrivateKafka();
  bus = testKafkaBus(broker, 'chaos_kafka', { logLevel: 'warn', logger: busLog });
  await bus.ensureTopics([
    { topic: stack.topics.calls, partitions: PARTITIONS.calls, replicationFactor: 1 },
    { topic: stack.topics.results, partitions: PARTITIONS.results, replicationFactor: 1 },
    { topic: stack.topics.audit, partitions: PARTITIONS.audit, replicationFactor: 1 },
    { topic: stack.topics.dlq, partitions: PARTITIONS.dlq, replicationFactor: 1 },
  ]);
  ({ source } = privateReader(broker.brokers, 'chaos_kafka_reader', stack));
  built = ledger.pipeline({ redis: stack.redis.redis, keyPrefix: stack.redis.prefix, pool: stack.db.pool });
}, 180_000);

afterAll(async () => {
  built?.breakers.shutdown();
  await bus?.close().catch(() => undefined);
  await broker?.destroy();
  await stack?.close();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('Kafka broker restart', () => {
  it(
    'one executor rides out a broker restart: no duplicate, no lost call, sentinels succeed',
    async () => {
      const results = await collectTopic(source, 'results');
      const dlq = await collectTopic(source, 'dlq');
      const executor = ledger.executor(stack, built, { bus, name: 'kafka', logger: executorLog });
      await executor.start();

      let publishRetries = 0;
      const publish = async (events: readonly ToolCallRequestedEvent[]): Promise<void> => {
        for (;;) {
          try {
            for (const e of events) {
              await bus.publish(stack.topics.calls, [
                { key: e.resourceKey, value: await stack.codec.encode('calls', e) },
              ]);
            }
            return;
          } catch {
            publishRetries += 1;
            await sleep(500);
          }
        }
      };
      const calls = await ledger.calls(stack, { count: CALLS, tag: 'c' });
      const perTick = Math.max(1, Math.ceil(CALLS / ((2 * SCALE.outageMs + 6_000) / 100)));
      const publishing = ledger.publishInTicks(calls, perTick, publish);

      await sleep(3_000);
      const t0 = Date.now();
      await broker.stop();
      await sleep(SCALE.outageMs);
      await broker.start();
      const downMs = Date.now() - t0;
      await publishing;

      const answered = (): number => ledger.answered(results.events);
      await results.until(
        () => answered() >= CALLS,
        scaledTimeout(180_000),
        () =>
          [`every call answered: ${answered()}/${CALLS}`, busLog.summary(), executorLog.summary()].join('\n'),
      );
      const sentinels = await ledger.calls(stack, { count: 10, tag: 's', first: CALLS });
      await publish(sentinels);
      const sentinelIds = new Set(sentinels.map((s) => s.callId));
      await results.until(
        () =>
          new Set(results.events.filter((e) => sentinelIds.has(e.callId)).map((e) => e.callId)).size >= 10,
        60_000,
        () => ['the sentinels', busLog.summary(), executorLog.summary()].join('\n'),
      );
      await executor.stop();
      await results.stop();
      await dlq.stop();

      const tally = await ledger.tally(stack, calls, results.events, dlq.events);
      const sentinelTally = await ledger.tally(stack, sentinels, results.events, dlq.events);
      const figures = {
        scale: SCALE.name,
        calls: CALLS,
        brokerDownMs: downMs,
        publishRetries,
        ledgerRows: tally.ledgerRows,
        duplicates: tally.duplicates,
        answered: tally.answered,
        outcomes: tally.outcomes,
        openCases: tally.openCases.size,
        sentinelsSucceeded: ledger.sentinelsSucceeded(sentinels, sentinelTally),
      };
      console.log(`[chaos kafka-restart] ${JSON.stringify(figures)}`);

      expect(figures.duplicates).toBe(0);
      expect(tally.unanswered).toEqual([]);
      expect(tally.contradictions).toEqual([]);
      expect(sentinelTally.contradictions).toEqual([]);
      expect(figures.sentinelsSucceeded).toBe(sentinels.length);
    },
    scaledTimeout(240_000),
  );
});

import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import type { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import { systemClock } from '../../libs/core/system-clock.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import { createCallConsumer } from '../../services/executor/executor.js';
import { uniqueName } from '../helpers/names.js';
import {
  AUDIENCE,
  createExecutorStack,
  ISSUER,
  PARTITIONS,
  type ExecutorStack,
} from '../integration/executor/executor-stack.js';
import { testKafkaBus } from '../integration/executor/test-parts.js';
import { LEDGER_DDL, ledgerRows } from '../integration/executor/ledger-tools.js';
import { chaosPipeline, type ChaosPipeline } from './chaos-pipeline.js';
import { chaosScale, scaledTimeout } from './chaos-scale.js';
import { lossyLedgerTool } from './lossy-ledger.js';
import { startPrivateKafka, type PrivateKafka } from './private-kafka.js';
import { logTail } from './log-tail.js';
import { collectTopic, type CollectorSource } from './topic-collector.js';

/**
 * Scenario 2, the Kafka part: a broker of the suite's own (never the shared 19092 one) is stopped
 * under load and started again on the same storage, while one executor keeps running. Producers
 * retry failed publishes (a publish that failed after the broker took it becomes a replay, which
 * idempotency absorbs). Checks: 0 duplicate effects, every call answered or an open case, sentinel
 * calls after the restart succeed on the same executor.
 */
const SCALE = chaosScale();
const CALLS = SCALE.outageCalls;
const KEYS = 30;

let stack: ExecutorStack;
let broker: PrivateKafka;
let bus: KafkaEventBus;
let client: Kafka;
let built: ChaosPipeline;
// Kept quiet, but summarised when the scenario times out.
const busLog = logTail('bus (executor and publisher)');
const executorLog = logTail('executor');

beforeAll(async () => {
  stack = await createExecutorStack('chaos_kafka');
  await stack.db.pool.query(LEDGER_DDL);
  broker = await startPrivateKafka();
  bus = testKafkaBus(broker, 'chaos_kafka', { logLevel: 'warn', logger: busLog });
  await bus.ensureTopics([
    { topic: stack.topics.calls, partitions: PARTITIONS.calls, replicationFactor: 1 },
    { topic: stack.topics.results, partitions: PARTITIONS.results, replicationFactor: 1 },
    { topic: stack.topics.audit, partitions: PARTITIONS.audit, replicationFactor: 1 },
    { topic: stack.topics.dlq, partitions: PARTITIONS.dlq, replicationFactor: 1 },
  ]);
  client = new Kafka({
    clientId: uniqueName('chaos_kafka_reader'),
    brokers: broker.brokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 30, initialRetryTime: 200, maxRetryTime: 2_000 },
  });
  built = chaosPipeline({
    redis: stack.redis.redis,
    keyPrefix: stack.redis.prefix,
    owner: `${stack.prefix}-kafka`,
    tools: [lossyLedgerTool(stack.db.pool, { workMs: 2, losePerMille: 0 })],
  });
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
      const source: CollectorSource = {
        kafka: { consumer: (c) => client.consumer(c), uniqueGroupId: (p) => uniqueName(`${p}_group`) },
        topics: stack.topics,
        codec: stack.codec,
      };
      const results = await collectTopic(source, 'results');
      const dlq = await collectTopic(source, 'dlq');
      const executor = createCallConsumer({
        publisher: bus,
        subscriber: bus,
        codec: stack.codec,
        topics: stack.topics,
        replyTopics: { [stack.topics.results]: PARTITIONS.results },
        pipeline: built.pipeline,
        tools: built.registry,
        verifier: createPrincipalVerifier({ keys: stack.jwks, issuer: ISSUER, audience: AUDIENCE }),
        clock: systemClock,
        logger: executorLog,
        ownerId: `${stack.prefix}-kafka`,
        groupId: `${stack.prefix}-executors`,
        maxConcurrency: 24,
        backoff: { firstDelayMs: 50, maxDelayMs: 1_000 },
      });
      await executor.start();

      const template = await stack.request({ key: 'k0', seq: 0, ref: 'template' });
      const make = (i: number, tag: string): Promise<ToolCallRequestedEvent> => {
        const callId = `${stack.prefix}-${tag}${i}`;
        return stack.request(
          { key: `k${i % KEYS}`, seq: i, ref: callId },
          { callId, index: i, principalAssertion: template.principalAssertion, traceId: template.traceId },
        );
      };
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
      const calls: ToolCallRequestedEvent[] = [];
      for (let i = 0; i < CALLS; i++) calls.push(await make(i, 'c'));
      const perTick = Math.max(1, Math.ceil(CALLS / ((2 * SCALE.outageMs + 6_000) / 100)));
      const publishing = (async () => {
        for (let i = 0; i < calls.length; i += perTick) {
          await publish(calls.slice(i, i + perTick));
          await sleep(100);
        }
      })();

      await sleep(3_000);
      const t0 = Date.now();
      await broker.stop();
      await sleep(SCALE.outageMs);
      await broker.start();
      const downMs = Date.now() - t0;
      await publishing;

      const answered = (): number => new Set(results.events.map((e) => e.callId)).size;
      await results.until(
        () => answered() >= CALLS,
        scaledTimeout(180_000),
        () =>
          [`every call answered: ${answered()}/${CALLS}`, busLog.summary(), executorLog.summary()].join('\n'),
      );
      const sentinels: ToolCallRequestedEvent[] = [];
      for (let i = 0; i < 10; i++) sentinels.push(await make(CALLS + i, 's'));
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

      const rows = await ledgerRows(stack.db.pool);
      const rowsByCall = new Map<string, number>();
      for (const r of rows) rowsByCall.set(r.callRef, (rowsByCall.get(r.callRef) ?? 0) + 1);
      const outcomes = new Map<string, Set<string>>();
      for (const e of results.events)
        outcomes.set(e.callId, (outcomes.get(e.callId) ?? new Set()).add(e.outcome));
      const openCases = new Set(dlq.events.filter((d) => d.reason === 'UNRESOLVED').map((d) => d.callId));
      const tally: Record<string, number> = {};
      for (const c of calls) for (const o of outcomes.get(c.callId) ?? []) tally[o] = (tally[o] ?? 0) + 1;
      const figures = {
        scale: SCALE.name,
        calls: CALLS,
        brokerDownMs: downMs,
        publishRetries,
        ledgerRows: rows.length,
        duplicates: [...rowsByCall.values()].filter((n) => n > 1).length,
        answered: calls.filter((c) => outcomes.has(c.callId)).length,
        outcomes: tally,
        openCases: openCases.size,
        sentinelsSucceeded: sentinels.filter((s) => outcomes.get(s.callId)?.has('SUCCESS')).length,
      };
      console.log(`[chaos kafka-restart] ${JSON.stringify(figures)}`);

      expect(figures.duplicates).toBe(0);
      expect(figures.answered).toBe(CALLS);
      for (const c of calls) {
        const seen = outcomes.get(c.callId)!;
        const ran = rowsByCall.get(c.callId) ?? 0;
        if (seen.has('UNRESOLVED')) expect(openCases.has(c.callId), c.callId).toBe(true);
        else if (seen.has('SUCCESS') || seen.has('DUPLICATE')) expect(ran, c.callId).toBe(1);
        else expect(ran, `${c.callId}: ${[...seen].join()}`).toBe(0);
      }
      expect(figures.sentinelsSucceeded).toBe(sentinels.length);
    },
    scaledTimeout(240_000),
  );
});

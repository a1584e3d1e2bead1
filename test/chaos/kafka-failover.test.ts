import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import { partitionForKey } from '../../libs/bus/partitioner.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import { allTopics } from '../../libs/runtime/clients.js';
import {
  PARTITIONS,
  REPLY_PARTITION,
  TENANT,
  type ExecutorStack,
} from '../integration/executor/executor-stack.js';
import { testKafkaBus } from '../integration/executor/test-parts.js';
import type { ChaosPipeline } from './chaos-pipeline.js';
import { chaosScale, scaledTimeout } from './chaos-scale.js';
import * as ledger from './ledger-scenario.js';
import { logTail } from './log-tail.js';
import { startPrivateKafkaCluster, type PrivateKafkaCluster } from './private-kafka.js';
import { collectTopic, privateReader, type CollectorSource } from './topic-collector.js';

/**
 * A Kafka leader failover under a stream of calls through two executors. A private three-node
 * cluster (replication 3, min.insync.replicas 2; the shared cluster other suites use is never
 * touched) holds the topics; one node is made the leader of the busiest calls partition, of the
 * results partition every answer goes to, and of the audit partition, and a third of the way into
 * the stream it is SIGKILLed. The controller fences it after the broker session timeout and elects
 * new leaders from the in-sync replicas; later the node starts again on its storage, catches up and
 * rejoins every in-sync replica set. Checks: every acknowledged call answered, no effect twice, an
 * audit record for every attempt (each result event), committed offsets never past a call that was
 * not answered yet, sentinels after the restart succeed; and the time from the kill until answers
 * flow again.
 */
const SCALE = chaosScale();
const CALLS = SCALE.outageCalls;
/** How long the killed node stays down: past the broker session timeout (9 s) and the election. */
const RESTART_AFTER_MS = 10_000;
/** The stream of calls lasts about this long, so calls are still arriving when the leader dies. */
const STREAM_MS = SCALE.name === 'ci' ? 12_000 : 40_000;

let stack: ExecutorStack;
let cluster: PrivateKafkaCluster;
let buses: KafkaEventBus[] = [];
let source: CollectorSource;
let admin: Admin;
let built: ChaosPipeline;
/** The node that leads the partitions the stream depends on most, and is killed. */
let victim: number;
let busiestCallsPartition: number;
const busLog = logTail('buses (executors and publisher)');
const executorLog = logTail('executors');

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Replica lists for `partitions` partitions: the first replica is the preferred leader, which
 * Kafka makes the leader at creation. `victim` leads the partitions in `victimLeads`; the others
 * rotate over the nodes, and every partition has all three nodes as replicas.
 */
function replicaAssignment(
  nodes: readonly number[],
  partitions: number,
  victimLeads: ReadonlySet<number>,
): Array<{ partition: number; replicas: number[] }> {
  return Array.from({ length: partitions }, (_, partition) => {
    const leader = victimLeads.has(partition) ? victim : nodes[partition % nodes.length]!;
    return { partition, replicas: [leader, ...nodes.filter((n) => n !== leader)] };
  });
}

beforeAll(async () => {
  stack = await ledger.openStack('chaos_kafka_failover');
  cluster = await startPrivateKafkaCluster();
  const reader = privateReader(cluster.brokers, 'chaos_kafka_failover_reader', stack);
  source = reader.source;
  admin = reader.client.admin();
  await admin.connect();
  victim = cluster.nodeIds[Math.floor(Math.random() * cluster.nodeIds.length)]!;
  const perPartition = new Array<number>(PARTITIONS.calls).fill(0);
  for (let i = 0; i < CALLS; i++)
    perPartition[partitionForKey(`${TENANT}:ledger:k${i % ledger.OUTAGE_KEYS}`, PARTITIONS.calls)]! += 1;
  busiestCallsPartition = perPartition.indexOf(Math.max(...perPartition));
  const victimLeads = {
    calls: new Set([busiestCallsPartition]),
    results: new Set([REPLY_PARTITION]),
    audit: new Set([0]),
    dlq: new Set<number>(),
  };
  // The topics as the services create them (their configs), replicated 3 ways with
  // min.insync.replicas 2, and the leaders placed so that one node's death hits all three paths.
  // kafkajs' own wait for leaders gives up on "does not host this topic-partition", which a loaded
  // cluster answers while the new topics' metadata spreads; the loop below waits instead.
  await admin.createTopics({
    waitForLeaders: false,
    topics: allTopics(stack.topics, PARTITIONS).map((spec) => {
      const kind = (['calls', 'results', 'audit', 'dlq'] as const).find(
        (k) => stack.topics[k] === spec.topic,
      )!;
      return {
        topic: spec.topic,
        replicaAssignment: replicaAssignment(cluster.nodeIds, spec.partitions, victimLeads[kind]),
        configEntries: Object.entries({ ...spec.configs, 'min.insync.replicas': '2' }).map(
          ([name, value]) => ({ name, value }),
        ),
      };
    }),
  });
  await waitForFullReplicas(Object.values(stack.topics));
  buses = ['publisher', 'executor_a', 'executor_b'].map((name) =>
    testKafkaBus(cluster, `chaos_kafka_failover_${name}`, { logLevel: 'warn', logger: busLog }),
  );
  built = ledger.pipeline({ redis: stack.redis.redis, keyPrefix: stack.redis.prefix, pool: stack.db.pool });
}, 240_000);

afterAll(async () => {
  built?.breakers.shutdown();
  await Promise.all(buses.map((bus) => bus.close().catch(() => undefined)));
  await admin?.disconnect().catch(() => undefined);
  await cluster?.destroy();
  await stack?.close();
});

/** Resolves once every partition of `topics` has its preferred leader and all three replicas in sync. */
async function waitForFullReplicas(topics: readonly string[]): Promise<void> {
  for (let deadline = Date.now() + 60_000; ; await sleep(200)) {
    const described = await admin.fetchTopicMetadata({ topics: [...topics] }).catch(() => undefined);
    const ready = described?.topics.every(
      (t) =>
        t.partitions.length > 0 &&
        t.partitions.every((p) => p.leader === p.replicas[0] && p.isr.length === cluster.nodeIds.length),
    );
    if (ready === true) return;
    if (Date.now() > deadline) throw new Error(`the topics ${topics.join(', ')} have no full replica sets`);
  }
}

/** The leader of each partition of `topic`, by partition. */
async function leaders(topic: string): Promise<Map<number, number>> {
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
  return new Map(topics[0]!.partitions.map((p) => [p.partitionId, p.leader]));
}

describe('Kafka leader failover', () => {
  it(
    'two executors ride out the death of the leader of the busiest partitions: every call answered, no effect twice, every attempt audited',
    async () => {
      const [publisher, ...executorBuses] = buses as [KafkaEventBus, ...KafkaEventBus[]];
      const callsRead = await collectTopic(source, 'calls');
      const results = await collectTopic(source, 'results');
      const audit = await collectTopic(source, 'audit');
      const dlq = await collectTopic(source, 'dlq');
      expect((await leaders(stack.topics.results)).get(REPLY_PARTITION)).toBe(victim);
      expect((await leaders(stack.topics.calls)).get(busiestCallsPartition)).toBe(victim);
      expect((await leaders(stack.topics.audit)).get(0)).toBe(victim);
      const victimWasController = (await admin.describeCluster()).controller === victim;

      const executors = executorBuses.map((bus, i) =>
        ledger.executor(stack, built, { bus, name: `kafka-failover-${i}`, logger: executorLog }),
      );
      for (const executor of executors) await executor.start();

      // The executors' committed offsets, sampled: each sample must lie at or below the lowest call
      // of its partition that had no answer yet when it was read.
      const groupId = `${stack.prefix}-executors`;
      const offsetSamples: Array<{ at: number; partition: number; offset: number }> = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          try {
            const [read] = await admin.fetchOffsets({ groupId, topics: [stack.topics.calls] });
            const at = Date.now();
            for (const p of read?.partitions ?? [])
              if (Number(p.offset) >= 0)
                offsetSamples.push({ at, partition: p.partition, offset: Number(p.offset) });
          } catch {
            // The group coordinator may be the killed node: no sample until it moved.
          }
          await sleep(200);
        }
      })();
      // When each answer arrived, to time the stall the kill caused.
      const arrivedAt: number[] = [];
      const arrivals = setInterval(() => {
        while (arrivedAt.length < results.events.length) arrivedAt.push(Date.now());
      }, 20);

      // The SDK's side: every call is published on its own, as agents publish them, so a publish
      // waiting for the dead leader's partition holds up no other. A call counts once acknowledged.
      const calls = await ledger.calls(stack, { count: CALLS, tag: 'c' });
      const acknowledgedAt = new Map<string, number>();
      const publishFailures: string[] = [];
      const publishOne = async (call: ToolCallRequestedEvent): Promise<void> => {
        try {
          await publisher.publish(stack.topics.calls, [
            { key: call.resourceKey, value: await stack.codec.encode('calls', call) },
          ]);
          acknowledgedAt.set(call.callId, Date.now());
        } catch (error) {
          publishFailures.push(`${call.callId}: ${String(error)}`);
        }
      };
      const perTick = Math.max(1, Math.ceil(CALLS / (STREAM_MS / 100)));
      const publishes: Array<Promise<void>> = [];
      const publishing = (async () => {
        for (let i = 0; i < calls.length; i += perTick) {
          for (const call of calls.slice(i, i + perTick)) publishes.push(publishOne(call));
          await sleep(100);
        }
        await Promise.all(publishes);
      })();

      const answered = (): number => ledger.answered(results.events);
      /** What the topics say about each acknowledged call still without an answer, for a timeout. */
      const unansweredStory = (wanted: readonly ToolCallRequestedEvent[]): string[] => {
        const answeredIds = new Set(results.events.map((e) => e.callId));
        return wanted
          .filter((c) => !answeredIds.has(c.callId))
          .slice(0, 5)
          .map((c) => {
            const at = callsRead.events.findIndex((e) => e.callId === c.callId);
            const position = at < 0 ? undefined : callsRead.positions[at]!;
            const committed = offsetSamples.filter((o) => o.partition === position?.partition).at(-1);
            const audited = audit.events.filter((a) => a.callId === c.callId).map((a) => a.outcome);
            return (
              `  ${c.callId} (key ${c.resourceKey}): acknowledged ${new Date(acknowledgedAt.get(c.callId)!).toISOString()}, ` +
              `record ${position === undefined ? 'not read' : `${position.partition}:${position.offset}`}, ` +
              `committed ${committed === undefined ? 'none' : `${committed.offset} at ${new Date(committed.at).toISOString()}`}, ` +
              `audit [${audited.join(', ')}], dead letters ${dlq.events.filter((d) => d.callId === c.callId).length}`
            );
          });
      };
      // The kill comes a third of the way into the stream, once calls are being answered, so most
      // of the stream is published while the leader is dead and after.
      await sleep(STREAM_MS / 3);
      await results.until(
        () => answered() >= CALLS / 10,
        60_000,
        () => `a tenth answered: ${answered()}`,
      );
      const answeredAtKill = answered();
      const killedAt = Date.now();
      await cluster.kill(victim);
      // A new leader for the results partition: the controller fences the dead node once its broker
      // session times out and elects one of the in-sync followers.
      let resultsLeaderMovedMs: number | undefined;
      for (let deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
        const leader = await leaders(stack.topics.results).catch(() => undefined);
        const now = leader?.get(REPLY_PARTITION);
        if (now !== undefined && now !== victim && now >= 0) {
          resultsLeaderMovedMs = Date.now() - killedAt;
          break;
        }
      }
      // The old leader starts again on its storage while the stream is answered.
      let restartedAfterMs = 0;
      let restartTookMs = 0;
      const restarting = (async () => {
        await sleep(Math.max(0, killedAt + RESTART_AFTER_MS - Date.now()));
        const started = Date.now();
        await cluster.restart(victim);
        restartedAfterMs = Date.now() - killedAt;
        restartTookMs = Date.now() - started;
      })();
      await publishing;

      const acknowledged = calls.filter((c) => acknowledgedAt.has(c.callId));
      const answeredAcknowledged = (): number => {
        const ids = new Set(results.events.map((e) => e.callId));
        return acknowledged.filter((c) => ids.has(c.callId)).length;
      };
      await results.until(
        () => answeredAcknowledged() >= acknowledged.length,
        scaledTimeout(120_000),
        () =>
          [
            `every acknowledged call answered: ${answeredAcknowledged()}/${acknowledged.length}`,
            ...unansweredStory(acknowledged),
            busLog.summary(30),
            executorLog.summary(30),
          ].join('\n'),
      );
      await restarting;
      // The restarted node catches up and rejoins the in-sync replicas of every partition.
      let isrRestoredAfterMs: number | undefined;
      for (let deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(250)) {
        const { topics } = await admin.fetchTopicMetadata({ topics: Object.values(stack.topics) });
        if (topics.every((t) => t.partitions.every((p) => p.isr.includes(victim)))) {
          isrRestoredAfterMs = Date.now() - killedAt;
          break;
        }
      }
      const sentinels = await ledger.calls(stack, { count: 10, tag: 's', first: CALLS });
      const sentinelsAt = Date.now();
      for (const s of sentinels) await publishOne(s);
      const sentinelIds = new Set(sentinels.map((s) => s.callId));
      await results.until(
        () =>
          new Set(results.events.filter((e) => sentinelIds.has(e.callId)).map((e) => e.callId)).size >= 10,
        60_000,
        () => ['the sentinels', busLog.summary(), executorLog.summary()].join('\n'),
      );
      for (const executor of executors) await executor.stop();
      sampling = false;
      await sampler;
      clearInterval(arrivals);
      // Every attempt's audit record precedes its result: all of them are there by now.
      await audit.until(
        () => audit.events.length >= results.events.length,
        30_000,
        () => `an audit record per result: ${audit.events.length}/${results.events.length}`,
      );
      // Every call record, to map the committed offsets onto calls.
      await callsRead.until(
        () => callsRead.events.length >= acknowledged.length + sentinels.length,
        30_000,
        () => `every call record read: ${callsRead.events.length}`,
      );
      for (const collector of [callsRead, results, audit, dlq]) await collector.stop();

      const tally = await ledger.tally(stack, acknowledged, results.events, dlq.events);
      const sentinelTally = await ledger.tally(stack, sentinels, results.events, dlq.events);

      // Attempts: one result event each; each must have its audit record (same call, outcome).
      const attemptKey = (callId: string, outcome: string): string => `${callId} ${outcome}`;
      const auditLeft = new Map<string, number>();
      for (const a of audit.events)
        auditLeft.set(
          attemptKey(a.callId, a.outcome),
          (auditLeft.get(attemptKey(a.callId, a.outcome)) ?? 0) + 1,
        );
      const unaudited: string[] = [];
      for (const r of results.events) {
        const k = attemptKey(r.callId, r.outcome);
        const left = auditLeft.get(k) ?? 0;
        if (left === 0) unaudited.push(k);
        else auditLeft.set(k, left - 1);
      }
      const auditIds = new Set(audit.events.map((a) => a.recordId));

      // Offsets: a committed offset o of partition p at time t says every call below o in p was
      // finished, so each must have an answer completed by t.
      const firstCompletion = new Map<string, number>();
      for (const r of results.events)
        firstCompletion.set(r.callId, Math.min(firstCompletion.get(r.callId) ?? Infinity, r.completedAtMs));
      const callAt = new Map<string, string>();
      callsRead.positions.forEach((p, i) =>
        callAt.set(`${p.partition}:${p.offset}`, callsRead.events[i]!.callId),
      );
      const offsetViolations: string[] = [];
      for (const sample of offsetSamples) {
        for (let offset = 0; offset < sample.offset; offset++) {
          const callId = callAt.get(`${sample.partition}:${offset}`);
          if (callId === undefined) continue;
          const done = firstCompletion.get(callId);
          if (done === undefined || done > sample.at)
            offsetViolations.push(
              `offset ${sample.offset} of partition ${sample.partition} committed by ${new Date(sample.at).toISOString()} past ${callId} (answered ${done === undefined ? 'never' : new Date(done).toISOString()})`,
            );
        }
      }

      // Calls flowing again: from the kill to the end of the longest pause in acknowledged
      // publishes (the SDK's side) and in arriving answers (the executors' side) after it, up to
      // the sentinels (which wait for the restart).
      const resumedAfter = (times: Iterable<number>): { resumedMs: number; pauseMs: number } => {
        const after = [
          killedAt,
          ...[...times].filter((t) => t > killedAt && t < sentinelsAt).sort((x, y) => x - y),
        ];
        let best = { resumedMs: 0, pauseMs: 0 };
        for (let i = 1; i < after.length; i++)
          if (after[i]! - after[i - 1]! > best.pauseMs)
            best = { resumedMs: after[i]! - killedAt, pauseMs: after[i]! - after[i - 1]! };
        return best;
      };
      const publishPause = resumedAfter(acknowledgedAt.values());
      const answering = resumedAfter(arrivedAt);
      // The executors' side of the same: when each answer was completed, by the executor's clock.
      const completing = resumedAfter(results.events.map((e) => e.completedAtMs));
      // Acknowledged publishes and arrived answers per second, from 3 s before the kill on.
      const perSecond = (times: Iterable<number>): number[] => {
        const counts: number[] = [];
        for (const t of times) {
          const second = Math.floor((t - killedAt + 3_000) / 1_000);
          if (second >= 0) counts[second] = (counts[second] ?? 0) + 1;
        }
        return Array.from(counts, (n) => n ?? 0);
      };
      const answersPerCall = new Map<string, number>();
      for (const r of results.events) answersPerCall.set(r.callId, (answersPerCall.get(r.callId) ?? 0) + 1);

      const figures = {
        scale: SCALE.name,
        calls: CALLS,
        acknowledged: acknowledged.length,
        publishFailures: publishFailures.length,
        victim,
        victimWasController,
        busiestCallsPartition,
        answeredAtKill,
        resultsLeaderMovedMs,
        publishesResumedMs: publishPause.resumedMs,
        answersResumedMs: answering.resumedMs,
        answersCompletedResumedMs: completing.resumedMs,
        longestAnswerPauseMs: answering.pauseMs,
        restartedAfterMs,
        restartTookMs,
        isrRestoredAfterMs,
        acksPerSecond: perSecond(acknowledgedAt.values()).join(' '),
        answersPerSecond: perSecond(arrivedAt).join(' '),
        answered: tally.answered,
        answeredMoreThanOnce: [...answersPerCall.values()].filter((n) => n > 1).length,
        outcomes: tally.outcomes,
        failureCodes: tally.failureCodes,
        ledgerRows: tally.ledgerRows,
        duplicates: tally.duplicates,
        attempts: results.events.length,
        auditRecords: audit.events.length,
        unaudited: unaudited.length,
        offsetSamples: offsetSamples.length,
        offsetViolations: offsetViolations.length,
        openCases: tally.openCases.size,
        sentinelsSucceeded: ledger.sentinelsSucceeded(sentinels, sentinelTally),
      };
      console.log(`[chaos kafka-failover] ${JSON.stringify(figures)}`);

      expect(publishFailures).toEqual([]);
      expect(tally.unanswered).toEqual([]);
      expect(tally.duplicates).toBe(0);
      expect(tally.contradictions).toEqual([]);
      expect(unaudited).toEqual([]);
      expect(auditIds.size).toBe(audit.events.length);
      expect(offsetViolations.slice(0, 5)).toEqual([]);
      // The sampler saw the offsets move, so the check above had something to check.
      expect(new Set(offsetSamples.map((s) => `${s.partition}:${s.offset}`)).size).toBeGreaterThan(
        PARTITIONS.calls,
      );
      expect(isrRestoredAfterMs).toBeDefined();
      expect(sentinelTally.contradictions).toEqual([]);
      expect(figures.sentinelsSucceeded).toBe(sentinels.length);
    },
    scaledTimeout(240_000),
  );
});

import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Executor } from '../../services/executor/executor.js';
import { judgeCalls, type CallVerdict } from './call-verdict.js';
import { safetyCalls, streamCalls } from './call-stream.js';
import { chaosPipeline } from './chaos-pipeline.js';
import { chaosScale, scaledTimeout } from './chaos-scale.js';
import { complaints, logTail, type LogTail } from './log-tail.js';
import { testKafkaBus } from '../integration/executor/test-parts.js';
import { labExecutor, labScene, within } from './network-lab.js';
import { effectCounts, safetyLedgerTools } from './safety-ledger.js';

/**
 * The broker stalls instead of stopping: every connection to it stays open and nothing comes back
 * (the proxy in front of it black-holes every client — executors, the publisher, the collectors),
 * for longer than the session timeout; then it answers again with everything that waited. Unlike a
 * clean stop (kafka-restart.test.ts) no client sees a refused connection or a reset: each has to
 * notice by its own timeouts. Run with two executor children, then with one in-process executor
 * configured as in the broker-restart scenario. Checks: every call answered after the stall, 0
 * duplicate effects, no contradicting answers, every UNRESOLVED with its case; sentinel calls
 * after the stall succeed.
 */
const SCALE = chaosScale();
const CALLS = SCALE.networkCalls;
const KEYS = 24;

const scene = labScene('chaos_stall', {
  executorEnv: { CHAOS_WORK_MS: '20', CHAOS_TOOL_TIMEOUT_MS: '2000' },
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * How often a member's consumer was given up on by kafkajs and replaced (the executors log it), read
 * from log lines or a log summary.
 */
function consumerReplacements(text: string): number {
  let n = 0;
  for (const m of text.matchAll(/(\d+)× error kafka consumer stopped for good/g)) n += Number(m[1]);
  return n + (text.match(/"msg":"kafka consumer stopped for good/g) ?? []).length;
}

async function stalledRun(
  tag: string,
  diagnose: () => string,
  logs: () => string,
): Promise<{ verdict: CallVerdict; figures: object }> {
  const calls = await safetyCalls(scene.lab, tag, CALLS, KEYS);
  const ids = new Set(calls.map((c) => c.callId));
  const run = streamCalls(scene.lab, calls, scene.results, 6_000 + SCALE.networkFaultMs);
  await run.answeredShare(0.15, 60_000);
  const answeredAt = (): number => {
    return new Set(scene.results.events.filter((e) => ids.has(e.callId)).map((e) => e.callId)).size;
  };
  const before = answeredAt();
  const from = Date.now();
  scene.lab.kafkaProxy.setFaults({ blackhole: true });
  await sleep(SCALE.networkFaultMs);
  scene.lab.kafkaProxy.setFaults({});
  const healedAt = Date.now();
  const publishRetries = await run.published;
  const allMs = await run.allAnswered(scaledTimeout(120_000), diagnose);
  const sentinels = await safetyCalls(scene.lab, `${tag}s`, 9, 9);
  const sentinelRun = streamCalls(scene.lab, sentinels, scene.results, 100);
  await sentinelRun.allAnswered(60_000, diagnose);
  await sleep(1_000);
  const counts = await effectCounts(scene.lab.pool);
  const verdict = judgeCalls(calls, scene.results.events, scene.dlq.events, counts);
  const sentinelVerdict = judgeCalls(sentinels, scene.results.events, scene.dlq.events, counts);
  return {
    verdict,
    figures: {
      scale: SCALE.name,
      calls: CALLS,
      stallMs: healedAt - from,
      answeredBeforeStall: before,
      allAnsweredMs: allMs,
      lastAnswerAfterHealMs:
        Math.max(...scene.results.events.filter((e) => ids.has(e.callId)).map((e) => e.completedAtMs)) -
        healedAt,
      collectorCrashes: scene.results.crashes.length + scene.dlq.crashes.length,
      executorConsumerReplacements: consumerReplacements(logs()),
      publishRetries,
      duplicateEffects: verdict.duplicateEffects.length,
      lost: verdict.lost.length,
      contradictions: verdict.contradictions.length,
      openCases: verdict.openCases,
      outcomes: verdict.outcomes,
      sentinelsSucceeded: sentinelVerdict.outcomes.SUCCESS ?? 0,
    },
  };
}

function expectSound(verdict: CallVerdict, figures: object): void {
  expect(verdict.duplicateEffects).toEqual([]);
  expect(verdict.lost).toEqual([]);
  expect(verdict.contradictions).toEqual([]);
  expect(verdict.unresolvedWithoutCase).toEqual([]);
  expect((figures as { sentinelsSucceeded: number }).sentinelsSucceeded).toBe(9);
}

describe('broker stall', () => {
  it(
    'two executor children ride out a broker stall past the session timeout',
    async () => {
      await Promise.all([scene.lab.fleet.spawn(), scene.lab.fleet.spawn()]);
      const { verdict, figures } = await stalledRun(
        'kids',
        () => scene.lab.fleet.all.map((c) => complaints(c.name, c.output)).join('\n'),
        () => scene.lab.fleet.all.flatMap((c) => c.output).join('\n'),
      );
      console.log(`[chaos broker-stall children] ${JSON.stringify(figures)}`);
      expectSound(verdict, figures);
      expect(await scene.lab.fleet.stop()).toEqual([0, 0]);
    },
    scaledTimeout(200_000),
  );

  it(
    'one in-process executor, set up as in the broker-restart scenario, rides out a broker stall',
    async () => {
      const busLog: LogTail = logTail('stall executor bus');
      const executorLog: LogTail = logTail('stall executor');
      const redis = new Redis(scene.lab.redisServer.url, { maxRetriesPerRequest: 2 });
      redis.on('error', () => undefined);
      const bus = testKafkaBus(scene.lab.broker, 'chaos_stall_executor', {
        logLevel: 'warn',
        logger: busLog,
      });
      const owner = `${scene.lab.stack.prefix}-stall`;
      const built = chaosPipeline({
        redis,
        keyPrefix: scene.lab.stack.redis.prefix,
        tools: safetyLedgerTools(scene.lab.pool, { workMs: 20, timeoutMs: 2_000 }),
      });
      let executor: Executor | undefined;
      try {
        executor = labExecutor(scene.lab, { bus, pipeline: built, owner, logger: executorLog });
        await executor.start();
        const { verdict, figures } = await stalledRun(
          'inproc',
          () => [busLog.summary(), executorLog.summary()].join('\n'),
          () => busLog.summary(100),
        );
        console.log(`[chaos broker-stall in-process] ${JSON.stringify(figures)}`);
        expectSound(verdict, figures);
      } finally {
        // Bounded: after a failed check a call may still be waiting on a publish.
        await within(executor?.stop(), 15_000);
        built.breakers.shutdown();
        await within(bus.close(), 15_000);
        redis.disconnect();
      }
    },
    scaledTimeout(200_000),
  );
});

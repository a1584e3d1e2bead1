import pg from 'pg';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { migrate, PostgresIdempotencyStore } from '../../libs/adapters/postgres/index.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import type { Executor } from '../../services/executor/executor.js';
import { judgeCalls, type CallVerdict } from './call-verdict.js';
import { safetyCalls, streamCalls } from './call-stream.js';
import { chaosPipeline } from './chaos-pipeline.js';
import { chaosScale, scaledTimeout } from './chaos-scale.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { complaints, logTail } from './log-tail.js';
import { testKafkaBus } from '../integration/executor/test-parts.js';
import { labExecutor, labScene, within } from './network-lab.js';
import { effectCounts, safetyLedgerTools } from './safety-ledger.js';

/**
 * Cuts between an executor and the store its guarantees rest on, under a stream of calls of the
 * three retry-safety kinds:
 *
 * - Redis (claims and the shared rate limiter) black-holed for one of two executor children: calls
 *   it had claimed are between claim and completion, new ones are in the rate-limit take;
 * - a Postgres-backed idempotency store (an in-process executor whose claims go through a proxy of
 *   their own, while the tool's downstream stays reachable): first black-holed, then refusing.
 *
 * Checks: fail closed — no effect is started during the cut by the cut executor, except by calls
 * that held a claim when it began (a grace of work time plus a margin); 0 duplicate effects; after
 * healing every call is answered, no answer contradicts another or the effects, every UNRESOLVED has
 * its case.
 */
const SCALE = chaosScale();
const CALLS = SCALE.networkCalls;
const KEYS = 24;
const WORK_MS = 300;
const GRACE_MS = WORK_MS + 700;

const scene = labScene('chaos_store_cut', {
  executorEnv: { CHAOS_WORK_MS: String(WORK_MS), CHAOS_TOOL_TIMEOUT_MS: '2000' },
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Effects a process started inside [from + grace, to]. */
async function effectsInCut(pid: number, from: number, to: number): Promise<number> {
  const { rows } = await scene.lab.pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM effects WHERE pid = $1 AND at > $2 AND at < $3',
    [pid, new Date(from + GRACE_MS), new Date(to)],
  );
  return Number(rows[0]!.n);
}

async function effectsAround(pid: number, from: number): Promise<number> {
  const { rows } = await scene.lab.pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM effects WHERE pid = $1 AND at >= $2 AND at <= $3',
    [pid, new Date(from), new Date(from + GRACE_MS)],
  );
  return Number(rows[0]!.n);
}

function expectSound(verdict: CallVerdict): void {
  expect(verdict.duplicateEffects).toEqual([]);
  expect(verdict.lost).toEqual([]);
  expect(verdict.contradictions).toEqual([]);
  expect(verdict.unresolvedWithoutCase).toEqual([]);
}

function figuresOf(verdict: CallVerdict): Record<string, unknown> {
  return {
    answered: verdict.answered,
    lost: verdict.lost.length,
    duplicateEffects: verdict.duplicateEffects.length,
    contradictions: verdict.contradictions.length,
    unresolvedWithoutCase: verdict.unresolvedWithoutCase.length,
    reruns: verdict.reruns,
    openCases: verdict.openCases,
    outcomes: verdict.outcomes,
  };
}

/**
 * One cut under a stream of calls: publishes the calls tagged `tag` (the three safety kinds) over
 * 8 s plus the fault time, runs `cut` once 15 % are answered, waits for every answer (`diagnose`
 * says why on a timeout), `settle`s, and judges the calls against the effects. The figures start
 * with the scale, the cut's `label`, the calls, how long the cut lasted and until all answered.
 */
async function runCut(o: {
  readonly tag: string;
  readonly label: string;
  readonly cut: () => Promise<void>;
  readonly diagnose: () => string;
  readonly settle: () => Promise<void>;
}): Promise<{ verdict: CallVerdict; from: number; to: number; figures: Record<string, unknown> }> {
  const calls: ToolCallRequestedEvent[] = await safetyCalls(scene.lab, o.tag, CALLS, KEYS);
  const run = streamCalls(scene.lab, calls, scene.results, 8_000 + SCALE.networkFaultMs);
  await run.answeredShare(0.15, 60_000);
  const from = Date.now();
  await o.cut();
  const to = Date.now();
  await run.published;
  const allMs = await run.allAnswered(scaledTimeout(90_000), o.diagnose);
  await o.settle();
  const verdict = judgeCalls(calls, scene.results.events, scene.dlq.events, await effectsOf());
  const figures = { scale: SCALE.name, cut: o.label, calls: CALLS, cutMs: to - from, allAnsweredMs: allMs };
  return { verdict, from, to, figures };
}

describe('store cuts', () => {
  it(
    'Redis black-holed for one executor mid-claim and mid-rate-limit: fail closed, nothing lost after healing',
    async () => {
      const [cutOne] = await Promise.all([scene.lab.fleet.spawn(), scene.lab.fleet.spawn()]);
      const victimAddress = scene.lab.net.hostAddress(scene.lab.hostOf(1), 'd');
      const outcome = await runCut({
        tag: 'redis',
        label: 'redis blackhole, one of two executors',
        cut: async () => {
          scene.lab.redisProxy.setFaults({ blackhole: true }, [victimAddress]);
          await sleep(SCALE.networkFaultMs);
          scene.lab.redisProxy.setFaults({}, [victimAddress]);
        },
        diagnose: () => scene.lab.fleet.all.map((c) => complaints(c.name, c.output)).join('\n'),
        settle: () => sleep(2_000),
      });
      const inCut = await effectsInCut(cutOne.pid, outcome.from, outcome.to);
      const figures = {
        ...outcome.figures,
        effectsOfCutExecutorInGrace: await effectsAround(cutOne.pid, outcome.from),
        effectsOfCutExecutorAfterGrace: inCut,
        answersByProducer: outcome.verdict.answersByProducer,
        ...figuresOf(outcome.verdict),
      };
      console.log(`[chaos store-cut redis] ${JSON.stringify(figures)}`);
      expect(inCut).toBe(0);
      expectSound(outcome.verdict);
      expect(await scene.lab.fleet.stop()).toEqual([0, 0]);
    },
    scaledTimeout(150_000),
  );

  it(
    'a Postgres idempotency store black-holed, then refusing: fail closed, nothing lost after healing',
    async () => {
      // The store's own link: a proxy on loopback in front of the private Postgres.
      const storeProxy: FaultProxy = await startFaultProxy(
        { host: '127.0.0.1' },
        { host: '127.0.0.1', port: scene.lab.pgServer.port },
      );
      const storePool = new pg.Pool({
        connectionString: `postgres://postgres@${storeProxy.address}/postgres`,
        options: `-c search_path=${scene.lab.stack.db.schema}`,
        max: 10,
      });
      storePool.on('error', () => undefined);
      const redis = new Redis(scene.lab.redisServer.url, { maxRetriesPerRequest: 2 });
      redis.on('error', () => undefined);
      const busLog = logTail('store-cut executor bus');
      const executorLog = logTail('store-cut executor');
      const bus = testKafkaBus(scene.lab.broker, 'chaos_store_cut_executor', {
        logLevel: 'warn',
        logger: busLog,
      });
      const owner = `${scene.lab.stack.prefix}-pg-store`;
      const built = chaosPipeline({
        redis,
        keyPrefix: scene.lab.stack.redis.prefix,
        idempotency: new PostgresIdempotencyStore(storePool, { abandonedRetentionMs: 60_000 }),
        tools: safetyLedgerTools(scene.lab.pool, { workMs: WORK_MS, timeoutMs: 2_000 }),
      });
      let executor: Executor | undefined;
      try {
        await migrate(storePool);
        executor = labExecutor(scene.lab, { bus, pipeline: built, owner, logger: executorLog });
        await executor.start();
        const started = executor;
        const outcome = await runCut({
          tag: 'pgstore',
          label: 'postgres idempotency store: blackhole, then refusing',
          cut: async () => {
            storeProxy.setFaults({ blackhole: true });
            await sleep(SCALE.networkFaultMs / 2);
            storeProxy.setFaults({ refuse: true });
            await sleep(SCALE.networkFaultMs / 2);
            storeProxy.setFaults({});
          },
          diagnose: () => [busLog.summary(), executorLog.summary()].join('\n'),
          settle: async () => {
            await sleep(1_000);
            await started.stop();
          },
        });
        const inCut = await effectsInCut(process.pid, outcome.from, outcome.to);
        const figures = {
          ...outcome.figures,
          storeResets: storeProxy.stats().resets,
          effectsInGrace: await effectsAround(process.pid, outcome.from),
          effectsAfterGrace: inCut,
          ...figuresOf(outcome.verdict),
        };
        console.log(`[chaos store-cut postgres] ${JSON.stringify(figures)}`);
        expect(inCut).toBe(0);
        expectSound(outcome.verdict);
      } finally {
        // Bounded: after a failed check a call may still be waiting on a store or a publish.
        await within(executor?.stop(), 15_000);
        built.breakers.shutdown();
        await within(bus.close(), 15_000);
        redis.disconnect();
        await storePool.end().catch(() => undefined);
        await storeProxy.close();
      }
    },
    scaledTimeout(150_000),
  );
});

function effectsOf(): ReturnType<typeof effectCounts> {
  return effectCounts(scene.lab.pool);
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createExecutorStack, type ExecutorStack } from '../integration/executor/executor-stack.js';
import { LEDGER_DDL, ledgerRows } from '../integration/executor/ledger-tools.js';
import type { ChaosPipeline } from './chaos-pipeline.js';
import { chaosScale, scaledTimeout } from './chaos-scale.js';
import * as ledger from './ledger-scenario.js';
import { startPrivatePostgres, startPrivateRedis, type PrivateServer } from './private-servers.js';
import { collectTopic } from './topic-collector.js';

/**
 * Scenario 2, dependency outages, on a Redis and a Postgres this suite starts itself (the shared
 * ones are never stopped). Redis holds the idempotency claims and rate limits; Postgres holds the
 * downstream's ledger (the tool's effects). One executor runs throughout — never restarted — while
 * calls keep arriving; Redis is stopped for the outage time, then Postgres.
 *
 * Checks:
 * - fail closed: no ledger row is written while Redis is down (after a grace period for calls that
 *   held a claim when it stopped), i.e. no effect without a claim;
 * - 0 duplicates: at most one row per call;
 * - 0 lost calls: every call ends with a result (after dedupe by call id) or an UNRESOLVED case;
 * - recovery: sentinel calls after both outages all succeed on the same executor.
 * The Kafka broker restart is not part of this scenario (see the report in the suite's README).
 */
const SCALE = chaosScale();
const CALLS = SCALE.outageCalls;
const GRACE_MS = 1_000;

let stack: ExecutorStack;
let redisServer: PrivateServer;
let pgServer: PrivateServer;
let redis: Redis;
let ledgerPool: pg.Pool;
let built: ChaosPipeline;

beforeAll(async () => {
  stack = await createExecutorStack('chaos_outage');
  redisServer = await startPrivateRedis();
  pgServer = await startPrivatePostgres();
  redis = new Redis(redisServer.url, { maxRetriesPerRequest: 2 });
  redis.on('error', () => undefined);
  ledgerPool = new pg.Pool({ connectionString: pgServer.url, max: 10, connectionTimeoutMillis: 2_000 });
  ledgerPool.on('error', () => undefined);
  await ledgerPool.query(LEDGER_DDL);
  built = ledger.pipeline({ redis, keyPrefix: stack.redis.prefix, pool: ledgerPool });
});

afterAll(async () => {
  built?.breakers.shutdown();
  await stack?.close();
  redis?.disconnect();
  await ledgerPool?.end().catch(() => undefined);
  await redisServer?.destroy();
  await pgServer?.destroy();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('dependency outages', () => {
  it(
    'Redis and Postgres stopped under load: fail closed, no duplicate, no lost call, recovery in place',
    async () => {
      const results = await collectTopic(stack, 'results');
      const dlq = await collectTopic(stack, 'dlq');
      const executor = stack.executor(built);
      await executor.start();

      const calls = await ledger.calls(stack, { count: CALLS, tag: 'c' });

      // Calls arrive evenly over both outages and the gaps around them.
      const spanMs = 3 * SCALE.outageMs + 6_000;
      const perTick = Math.max(1, Math.ceil(CALLS / (spanMs / 100)));
      const publishing = ledger.publishInTicks(calls, perTick, (batch) => stack.publishCalls(batch));

      const windows: Record<string, { from: Date; to: Date }> = {};
      await sleep(2_000);
      let from = new Date();
      await redisServer.stop();
      await sleep(SCALE.outageMs);
      await redisServer.start();
      windows.redis = { from, to: new Date() };
      await sleep(2_000);
      from = new Date();
      await pgServer.stop();
      await sleep(SCALE.outageMs);
      await pgServer.start();
      windows.postgres = { from, to: new Date() };
      await publishing;

      const answered = (): number => ledger.answered(results.events);
      await results.until(
        () => answered() >= CALLS,
        scaledTimeout(120_000),
        () => `every call answered: ${answered()}/${CALLS}`,
      );
      // Recovery without a restart: fresh calls on the same executor all succeed.
      const sentinels = await ledger.calls(stack, { count: 10, tag: 's', first: CALLS });
      await stack.publishCalls(sentinels);
      const sentinelIds = new Set(sentinels.map((s) => s.callId));
      await results.until(
        () => results.events.filter((e) => sentinelIds.has(e.callId)).length >= sentinels.length,
        60_000,
        () => 'the sentinel calls',
      );
      await executor.stop();
      await results.stop();
      await dlq.stop();

      const { rows: timed } = await ledgerPool.query<{ call_ref: string; at: Date }>(
        'SELECT call_ref, at FROM ledger ORDER BY id',
      );
      const rows = await ledgerRows(ledgerPool);
      const rowsByCall = new Map<string, number>();
      for (const r of rows) rowsByCall.set(r.callRef, (rowsByCall.get(r.callRef) ?? 0) + 1);
      const inRedisOutage = timed.filter(
        (r) => r.at.getTime() > windows.redis!.from.getTime() + GRACE_MS && r.at < windows.redis!.to,
      ).length;
      const outcomes = new Map<string, string[]>();
      for (const e of results.events)
        outcomes.set(e.callId, [...(outcomes.get(e.callId) ?? []), `${e.outcome}:${e.error?.code ?? ''}`]);
      const openCases = new Set(dlq.events.filter((d) => d.reason === 'UNRESOLVED').map((d) => d.callId));
      const tally = new Map<string, number>();
      for (const c of calls)
        for (const o of new Set(outcomes.get(c.callId))) tally.set(o, (tally.get(o) ?? 0) + 1);
      const figures = {
        scale: SCALE.name,
        calls: CALLS,
        outageMs: SCALE.outageMs,
        ledgerRows: rows.length,
        rowsDuringRedisOutageAfterGrace: inRedisOutage,
        duplicates: [...rowsByCall.values()].filter((n) => n > 1).length,
        answered: [...outcomes.keys()].filter((id) => !sentinelIds.has(id)).length,
        outcomes: Object.fromEntries(tally),
        openCases: openCases.size,
        sentinelsSucceeded: results.events.filter((e) => sentinelIds.has(e.callId) && e.outcome === 'SUCCESS')
          .length,
      };
      console.log(`[chaos outages] ${JSON.stringify(figures)}`);

      expect(inRedisOutage).toBe(0);
      expect(figures.duplicates).toBe(0);
      expect(figures.answered).toBe(CALLS);
      for (const c of calls) {
        const seen = outcomes.get(c.callId) ?? [];
        const ran = rowsByCall.get(c.callId) ?? 0;
        if (seen.some((s) => s.startsWith('UNRESOLVED'))) {
          expect(openCases.has(c.callId), c.callId).toBe(true);
        } else if (seen.some((s) => s.startsWith('SUCCESS') || s.startsWith('DUPLICATE'))) {
          expect(ran, `${c.callId}: ${seen.join()}`).toBe(1);
        } else {
          // A refusal or failure is only honest when nothing happened.
          expect(ran, `${c.callId}: ${seen.join()}`).toBe(0);
        }
      }
      expect(figures.sentinelsSucceeded).toBe(sentinels.length);
    },
    scaledTimeout(240_000),
  );
});

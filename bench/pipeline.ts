/**
 * In-process guard pipeline throughput, per-stage cost, and a same-process baseline.
 *
 *   npx tsx bench/pipeline.ts            (REDIS_URL / DATABASE_URL override the local servers)
 *
 * Not a test: it measures, prints a markdown report, and exits. Every configuration is run REPEATS
 * times after one warm-up run; figures are medians over the repeats. The tool is a state-changing
 * no-op with a (never exhausted) per-principal rate limit, so every call takes the full path: resolve,
 * input schema, authorization, one rate-limit bucket take, policy, idempotency claim + complete,
 * execute through the breaker, output schema.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import { MemoryFactStore, MemoryIdempotencyStore, MemoryRateLimiter } from '../libs/adapters/memory/index.js';
import { PostgresIdempotencyStore, migrate } from '../libs/adapters/postgres/index.js';
import { RedisFactStore, RedisIdempotencyStore, RedisRateLimiter } from '../libs/adapters/redis/index.js';
import { systemClock } from '../libs/core/system-clock.js';
import type { ExecutionContext, NormalizedToolCall } from '../libs/core/types.js';
import { createCircuitBreakers } from '../libs/execution/breakers.js';
import { createOutboundLimiter } from '../libs/execution/outbound-limiter.js';
import { GuardPipeline, INGRESS_STAGES } from '../libs/pipeline/guard-pipeline.js';
import type { StageName } from '../libs/core/audit-record.js';
import { createPolicyEngine } from '../libs/policy/index.js';
import type { Clock } from '../libs/core/clock.js';
import type { IdempotencyStore } from '../libs/ports/idempotency-store.js';
import type { RateLimiter } from '../libs/ports/rate-limiter.js';
import type { FactStore } from '../libs/ports/fact-store.js';
import type { PolicyEngine } from '../libs/pipeline/deps.js';
import { ToolRegistry } from '../libs/registry/tool-registry.js';
import type { ToolInvocation } from '../libs/registry/tool-definition.js';
import { NOOP_TOOL, noopTool } from './lib/bench-tools.js';
import { runMain } from './lib/report.js';
import { deleteRedisKeys } from './lib/toolgate-stack.js';
import { STAGES } from '../libs/guards/stages.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const IN_FLIGHT = 64;

/**
 * Sub-millisecond epoch time, so stage durations (measured with deps.clock) resolve microseconds.
 * Sleeping is the system clock's own, so timers behave exactly as in production.
 */
const clock: Clock = { ...systemClock, now: () => performance.timeOrigin + performance.now() };

interface Adapters {
  readonly name: string;
  readonly idempotency: IdempotencyStore;
  readonly rateLimiter: RateLimiter;
  /** Calls per measured run (fewer for networked stores, to keep the whole bench within minutes). */
  readonly calls: number;
  /**
   * The business rules: none governing the tool (the stage decides without evaluating anything),
   * a Cedar rule over an argument, or a Cedar rule over a count fact kept in `facts`.
   */
  readonly policy?: 'none' | 'argument rule' | 'fact rule';
  readonly facts?: FactStore;
}

const ARGUMENT_RULE = `@id("bench-argument")
@reason("n must not be negative")
forbid (principal, action == Toolgate::Action::"${NOOP_TOOL}", resource) when { context.args.n < 0 };`;

const FACT_RULE = `@id("bench-fact")
@reason("too many calls on this resource in a minute")
forbid (principal, action == Toolgate::Action::"${NOOP_TOOL}", resource)
when { context.facts.calls_1m > 1000000000 };`;

function benchPolicy(kind: Adapters['policy']): PolicyEngine {
  if (kind === 'argument rule')
    return createPolicyEngine({ version: 'bench', cedar: ARGUMENT_RULE }, [noopTool]);
  if (kind === 'fact rule') {
    return createPolicyEngine(
      {
        version: 'bench',
        cedar: FACT_RULE,
        facts: [
          {
            name: 'calls_1m',
            tools: [NOOP_TOOL],
            measure: { count: true },
            per: ['resourceKey'],
            windowMs: 60_000,
          },
        ],
      },
      [noopTool],
    );
  }
  return createPolicyEngine({ version: 'bench' }, []);
}

function pipelineFor(
  adapters: Adapters,
  onStage?: (stage: StageName, durationMs: number) => void,
): GuardPipeline {
  const registry = new ToolRegistry();
  registry.register(noopTool);
  return new GuardPipeline(
    {
      tools: registry,
      idempotency: adapters.idempotency,
      rateLimiter: adapters.rateLimiter,
      policy: benchPolicy(adapters.policy),
      ...(adapters.facts === undefined ? {} : { facts: adapters.facts }),
      breakers: createCircuitBreakers({
        errorThresholdPercentage: 50,
        volumeThreshold: 20,
        resetTimeoutMs: 10_000,
        timeoutMs: false,
      }),
      outbound: createOutboundLimiter(adapters.rateLimiter, {}, clock),
      clock,
      owner: 'bench-executor',
      settings: { resultTtlMs: 600_000, leaseMarginMs: 5_000 },
      ...(onStage === undefined
        ? {}
        : { observer: { onStage: (_tool, d) => onStage(d.stage, d.durationMs) } }),
    },
    STAGES,
  );
}

let runCounter = 0;

function ctxFor(taskId: string, index: number): ExecutionContext {
  return {
    principal: { id: 'bench-agent', tenant: 't1', kind: 'agent', scopes: [], roles: [] },
    tenant: 't1',
    taskId,
    step: 0,
    index,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  };
}

/** Runs `n` distinct calls (distinct idempotency keys) with `inFlight` at a time; returns calls/s. */
async function runCalls(
  n: number,
  inFlight: number,
  one: (call: NormalizedToolCall, ctx: ExecutionContext) => Promise<void>,
): Promise<number> {
  const taskId = `bench-${process.pid}-${Date.now()}-${runCounter++}`;
  let next = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      await one({ id: `c${i}`, name: NOOP_TOOL, arguments: { n: i } }, ctxFor(taskId, i));
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(inFlight, n) }, worker));
  return n / ((performance.now() - t0) / 1000);
}

function throughPipeline(pipeline: GuardPipeline) {
  return async (call: NormalizedToolCall, ctx: ExecutionContext): Promise<void> => {
    const { result } = await pipeline.run(call, ctx);
    if (result.outcome !== 'SUCCESS') {
      throw new Error(`bench call ended ${result.outcome}: ${result.error?.code} ${result.error?.message}`);
    }
  };
}

/** The baseline: the same tool called directly, with nothing around it. */
async function direct(call: NormalizedToolCall, ctx: ExecutionContext): Promise<void> {
  const inv: ToolInvocation = {
    ctx,
    idempotencyKey: 'k',
    attempt: 1,
    signal: NEVER,
    assertLive: () => undefined,
  };
  const out = await noopTool.execute(call.arguments, inv);
  if (out === undefined) throw new Error('no output');
}
const NEVER = new AbortController().signal;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

async function repeated(times: number, fn: () => Promise<number>): Promise<number> {
  await fn(); // warm-up: JIT, connection pools, scripts loaded
  const results: number[] = [];
  for (let i = 0; i < times; i++) results.push(await fn());
  return median(results);
}

interface Row {
  readonly name: string;
  readonly sequential: number;
  readonly concurrent: number;
  readonly stageUs: Map<StageName, number>;
  readonly callP50Us: number;
  readonly callP99Us: number;
}

async function measureAdapters(adapters: Adapters): Promise<Row> {
  const plain = pipelineFor(adapters);
  const sequential = await repeated(REPEATS, () => runCalls(adapters.calls, 1, throughPipeline(plain)));
  const concurrent = await repeated(REPEATS, () =>
    runCalls(adapters.calls, IN_FLIGHT, throughPipeline(plain)),
  );
  // Stage costs from the pipeline's own decision timings, sequential calls only (concurrent timings
  // would include time spent waiting behind other calls).
  const samples = new Map<StageName, number[]>();
  const observed = pipelineFor(adapters, (stage, ms) => {
    let list = samples.get(stage);
    if (list === undefined) samples.set(stage, (list = []));
    list.push(ms * 1000);
  });
  // Whole-call latency of the same calls: its median is robust to other processes taking the CPU
  // now and then, which the calls/s figures (means) are not.
  const callUs: number[] = [];
  const timed = throughPipeline(observed);
  const timedCall = async (call: NormalizedToolCall, ctx: ExecutionContext): Promise<void> => {
    const t0 = performance.now();
    await timed(call, ctx);
    callUs.push((performance.now() - t0) * 1000);
  };
  for (let i = 0; i < REPEATS; i++) await runCalls(adapters.calls, 1, timedCall);
  const stageUs = new Map<StageName, number>();
  for (const [stage, list] of samples) stageUs.set(stage, median(list));
  return {
    name: adapters.name,
    sequential,
    concurrent,
    stageUs,
    callP50Us: median(callUs),
    callP99Us: percentile(callUs, 0.99),
  };
}

/** The stages of a run whose caller vouches for its principal, as the report lists them: the pipeline's order. */
const STAGE_ORDER: readonly StageName[] = STAGES.map((s) => s.name).filter(
  (n) => !INGRESS_STAGES.includes(n),
);

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main(): Promise<void> {
  const cpus = os.cpus();
  process.stdout.write(
    `machine: ${cpus.length} cores (${cpus[0]?.model ?? 'unknown'}), ${fmt(os.totalmem() / 2 ** 30)} GiB, ` +
      `node ${process.version}, ${os.platform()} ${os.release()}; repeats=${REPEATS}, in flight=${IN_FLIGHT}; ` +
      `load average at start ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}\n\n`,
  );

  const baselineCalls = 20_000;
  const baseSeq = await repeated(REPEATS, () => runCalls(baselineCalls, 1, direct));
  const baseConc = await repeated(REPEATS, () => runCalls(baselineCalls, IN_FLIGHT, direct));

  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const prefix = `bench:${process.pid}:${Date.now()}:`;
  const schema = `bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const pool = new pg.Pool({
    connectionString: DATABASE_URL,
    max: 10,
    options: `-c search_path="${schema}"`,
  });
  await migrate(pool);

  const rows: Row[] = [];
  try {
    rows.push(
      await measureAdapters({
        name: 'memory (idempotency + rate limit in process)',
        idempotency: new MemoryIdempotencyStore(clock),
        rateLimiter: new MemoryRateLimiter(clock),
        calls: 5_000,
      }),
    );
    rows.push(
      await measureAdapters({
        name: 'memory + a Cedar rule over an argument',
        idempotency: new MemoryIdempotencyStore(clock),
        rateLimiter: new MemoryRateLimiter(clock),
        calls: 5_000,
        policy: 'argument rule',
      }),
    );
    rows.push(
      await measureAdapters({
        name: 'memory + a Cedar rule over a count fact',
        idempotency: new MemoryIdempotencyStore(clock),
        rateLimiter: new MemoryRateLimiter(clock),
        calls: 5_000,
        policy: 'fact rule',
        facts: new MemoryFactStore(),
      }),
    );
    const redisLimiter = new RedisRateLimiter(redis, { keyPrefix: prefix });
    rows.push(
      await measureAdapters({
        name: 'Redis (idempotency + rate limit)',
        idempotency: new RedisIdempotencyStore(redis, { keyPrefix: prefix, abandonedRetentionMs: 600_000 }),
        rateLimiter: redisLimiter,
        calls: 2_000,
      }),
    );
    rows.push(
      await measureAdapters({
        name: 'Redis + a Cedar rule over a count fact (Redis facts)',
        idempotency: new RedisIdempotencyStore(redis, { keyPrefix: prefix, abandonedRetentionMs: 600_000 }),
        rateLimiter: redisLimiter,
        calls: 2_000,
        policy: 'fact rule',
        facts: new RedisFactStore(redis, { keyPrefix: prefix }),
      }),
    );
    rows.push(
      await measureAdapters({
        name: 'Postgres idempotency + Redis rate limit',
        idempotency: new PostgresIdempotencyStore(pool, { abandonedRetentionMs: 600_000 }),
        rateLimiter: redisLimiter,
        calls: 1_000,
      }),
    );
  } finally {
    await deleteRedisKeys(redis, prefix);
    await redis.quit();
    await pool.end();
    await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
    await admin.end();
  }

  const out: string[] = [];
  out.push(
    `Baseline (tool called directly): ${fmt(baseSeq)} calls/s sequential, ${fmt(baseConc)} calls/s with ${IN_FLIGHT} in flight.`,
  );
  out.push('');
  out.push(
    `| adapters | sequential calls/s | µs/call | × baseline time | ${IN_FLIGHT} in flight calls/s | × baseline time |`,
  );
  out.push('|---|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    out.push(
      `| ${r.name} | ${fmt(r.sequential)} | ${fmt(1e6 / r.sequential, 1)} | ${fmt(baseSeq / r.sequential)} | ` +
        `${fmt(r.concurrent)} | ${fmt(baseConc / r.concurrent)} |`,
    );
  }
  out.push('');
  out.push(
    "Median µs per stage (sequential calls, from the pipeline's own stage decisions), and per whole call:",
  );
  out.push('');
  out.push(`| stage | ${rows.map((r) => r.name).join(' | ')} |`);
  out.push(`|---|${rows.map(() => '---:').join('|')}|`);
  for (const stage of STAGE_ORDER) {
    out.push(`| ${stage} | ${rows.map((r) => fmt(r.stageUs.get(stage) ?? Number.NaN, 1)).join(' | ')} |`);
  }
  const sums = rows.map((r) => [...r.stageUs.values()].reduce((a, b) => a + b, 0));
  out.push(`| sum of stage medians | ${sums.map((s) => fmt(s, 1)).join(' | ')} |`);
  out.push(`| whole call, median | ${rows.map((r) => fmt(r.callP50Us, 1)).join(' | ')} |`);
  out.push(`| whole call, p99 | ${rows.map((r) => fmt(r.callP99Us, 1)).join(' | ')} |`);
  out.push(
    `| whole call, mean (1e6 / sequential calls/s) | ${rows.map((r) => fmt(1e6 / r.sequential, 1)).join(' | ')} |`,
  );
  out.push('');
  out.push(
    `load average at end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

runMain(main);

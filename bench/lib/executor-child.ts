/**
 * Entry of an executor child process (see child-protocol.ts): reads its configuration from
 * BENCH_CHILD_CONFIG, runs the toolgate executor or the raw pass-through, reports progress and
 * samples to the parent over IPC, and stops when told (or when the parent goes away).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { ChildConfig, ChildReport, ParentCommand } from './child-protocol.js';
import { newHistogram, recordMs, summarize } from './latency-histogram.js';
import { startPassThrough } from './raw-pass-through.js';
import { nowMs } from './report.js';
import { createBenchExecutor } from './toolgate-stack.js';

const config = JSON.parse(process.env.BENCH_CHILD_CONFIG ?? '{}') as ChildConfig;
const report = (m: ChildReport): void => {
  if (process.connected) process.send!(m);
};

interface Running {
  done(): number;
  first(): number;
  last(): number;
  assignment(): readonly number[];
  errors(): number;
  notSuccess(): number;
  stop(): Promise<void>;
}

const pipelineRuns = newHistogram();

async function start(): Promise<Running> {
  if (config.mode === 'raw-one' || config.mode === 'raw-one-platformatic') {
    const common = {
      brokers: config.brokers,
      groupId: config.groupId,
      input: config.topics.calls,
      results: config.topics.results,
      audit: config.topics.audit,
      mode: 'one',
      ...(config.resultPartition === undefined ? {} : { resultPartition: config.resultPartition }),
    } as const;
    const raw =
      config.mode === 'raw-one'
        ? await startPassThrough({ ...common, partitionsConcurrently: config.partitionsConcurrently })
        : await (await import('./raw-pass-through-platformatic.js')).startPlatformaticPassThrough(common);
    return {
      done: () => raw.forwarded(),
      first: () => raw.firstBatchAtMs(),
      last: () => raw.lastForwardedAtMs(),
      assignment: () => [],
      errors: () => 0,
      notSuccess: () => 0,
      stop: () => raw.stop(),
    };
  }
  const ex = await createBenchExecutor({
    conn: config,
    topics: config.topics,
    resultsPartitions: config.resultsPartitions,
    jwks: config.jwks,
    redisUrl: config.redisUrl,
    redisPrefix: config.redisPrefix,
    groupId: config.groupId,
    ownerId: config.ownerId,
    maxConcurrency: config.maxConcurrency,
    partitionsConcurrently: config.partitionsConcurrently,
    ...(config.resultTtlMs === undefined ? {} : { resultTtlMs: config.resultTtlMs }),
    onPipelineRun: (ms) => recordMs(pipelineRuns, ms),
  });
  await ex.executor.start();
  return {
    done: () => ex.counts.results,
    first: () => ex.counts.firstBatchAtMs,
    last: () => ex.counts.lastResultAtMs,
    assignment: () => ex.assignment(),
    errors: () => ex.counts.errors,
    notSuccess: () =>
      [...ex.counts.outcomes.entries()].reduce((sum, [k, v]) => (k === 'SUCCESS' ? sum : sum + v), 0),
    stop: () => ex.close(),
  };
}

async function main(): Promise<void> {
  let running: Running;
  try {
    running = await start();
  } catch (err) {
    report({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  }
  report({ type: 'ready' });
  const progress = setInterval(
    () =>
      report({
        type: 'progress',
        done: running.done(),
        firstBatchAtMs: running.first(),
        lastDoneAtMs: running.last(),
        assignment: running.assignment(),
        errors: running.errors(),
        notSuccess: running.notSuccess(),
      }),
    250,
  );
  let sampler: NodeJS.Timeout | undefined;
  if (config.sampleIntervalMs !== undefined) {
    const resolutionMs = 10;
    const delay = monitorEventLoopDelay({ resolution: resolutionMs });
    const beyond = (ns: number): number => Math.max(0, ns / 1e6 - resolutionMs);
    delay.enable();
    sampler = setInterval(() => {
      const mem = process.memoryUsage();
      report({
        type: 'sample',
        atMs: nowMs(),
        rssMb: mem.rss / 2 ** 20,
        heapUsedMb: mem.heapUsed / 2 ** 20,
        // The histogram holds whole sampling intervals; the delay is what exceeds the resolution.
        eventLoopDelay: {
          p50: beyond(delay.percentile(50)),
          p99: beyond(delay.percentile(99)),
          max: beyond(delay.max),
        },
        done: running.done(),
      });
      delay.reset();
    }, config.sampleIntervalMs);
  }
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    clearInterval(progress);
    clearInterval(sampler);
    await running.stop().catch(() => undefined);
    if (process.connected) process.send!({ type: 'stopped' } satisfies ChildReport, () => process.exit(0));
    else process.exit(0);
  };
  process.on('message', (raw) => {
    const command = raw as ParentCommand;
    if (command.type === 'stop') void stop();
    else if (command.type === 'pipeline-stats') {
      report({ type: 'pipeline-stats', summary: summarize(pipelineRuns) });
      pipelineRuns.reset();
    }
  });
  // An orphaned child stops by itself.
  process.on('disconnect', () => void stop());
}

void main();

/**
 * Executor child processes for the benchmarks that need several processes (scale-out) or the
 * executor's own process figures (latency, soak): what the parent sends, what the child reports,
 * and the parent's handle on a child. The child is bench/lib/executor-child.ts.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { siblingModule } from './sibling-module.js';
import type { JWK } from 'jose';
import type { TopicNames } from '../../libs/events/topics.js';
import type { LatencySummary } from './latency-histogram.js';
import type { BenchServers } from './servers.js';
import type { BenchKeys, BenchTopics } from './toolgate-stack.js';

/**
 * What a child runs: the toolgate executor, or a raw pass-through (one output per input) on kafkajs
 * (`raw-one`) or on `@platformatic/kafka` (`raw-one-platformatic`).
 */
export interface ChildConfig {
  readonly mode: 'toolgate' | 'raw-one' | 'raw-one-platformatic';
  readonly brokers: readonly string[];
  readonly registryUrl: string;
  readonly redisUrl: string;
  readonly topics: TopicNames;
  readonly resultsPartitions: number;
  readonly jwks: { keys: JWK[] };
  readonly groupId: string;
  readonly ownerId: string;
  readonly redisPrefix: string;
  readonly maxConcurrency: number;
  readonly partitionsConcurrently: number;
  readonly resultTtlMs?: number;
  /** raw-one*: every output to this partition of the results topic. */
  readonly resultPartition?: number;
  /** Process samples (RSS, heap, event-loop delay) every this many ms; none when absent. */
  readonly sampleIntervalMs?: number;
}

/** The part of a child's config that says where it runs: servers, topics, keys, group and names. */
export type ChildPlacement = Pick<
  ChildConfig,
  | 'brokers'
  | 'registryUrl'
  | 'redisUrl'
  | 'topics'
  | 'resultsPartitions'
  | 'jwks'
  | 'groupId'
  | 'ownerId'
  | 'redisPrefix'
>;

/**
 * Where a child of a run on `setup` runs, as every benchmark places it: on `servers`, consuming
 * `setup`'s topics (results to all of its results partitions) in group `<prefix>-executors`,
 * verifying with `keys`' JWKS, its Redis keys under `<prefix>:`, as owner `<prefix>-executor` +
 * `ownerSuffix`.
 */
export function childPlacement(
  servers: Pick<BenchServers, 'brokers' | 'registryUrl' | 'redisUrl'>,
  keys: Pick<BenchKeys, 'jwks'>,
  setup: Pick<BenchTopics, 'prefix' | 'topics' | 'partitions'>,
  ownerSuffix = '',
): ChildPlacement {
  return {
    brokers: servers.brokers,
    registryUrl: servers.registryUrl,
    redisUrl: servers.redisUrl,
    topics: setup.topics,
    resultsPartitions: setup.partitions.results,
    jwks: keys.jwks,
    groupId: `${setup.prefix}-executors`,
    ownerId: `${setup.prefix}-executor${ownerSuffix}`,
    redisPrefix: `${setup.prefix}:`,
  };
}

/** Progress, sent every 250 ms. */
export interface ProgressReport {
  readonly type: 'progress';
  /** Results (raw: forwarded inputs) acknowledged by the broker. */
  readonly done: number;
  readonly firstBatchAtMs: number;
  readonly lastDoneAtMs: number;
  readonly assignment: readonly number[];
  readonly errors: number;
  /** Pipeline outcomes other than SUCCESS. */
  readonly notSuccess: number;
}

/** A process sample of the child. */
export interface ProcessSample {
  readonly type: 'sample';
  readonly atMs: number;
  readonly rssMb: number;
  readonly heapUsedMb: number;
  /**
   * Event-loop delay since the previous sample (perf_hooks.monitorEventLoopDelay at 10 ms resolution,
   * less the resolution itself), ms.
   */
  readonly eventLoopDelay: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly done: number;
}

export type ChildReport =
  | { readonly type: 'ready' }
  | ProgressReport
  | ProcessSample
  | { readonly type: 'pipeline-stats'; readonly summary: LatencySummary }
  | { readonly type: 'stopped' }
  | { readonly type: 'failed'; readonly message: string };

export type ParentCommand = { readonly type: 'pipeline-stats' } | { readonly type: 'stop' };

/** The parent's handle on one child. */
export interface ExecutorChild {
  readonly pid: number;
  /** Resolves when the child's executor (or pass-through) has joined its group. */
  readonly ready: Promise<void>;
  /** The latest progress report. */
  progress(): ProgressReport | undefined;
  /** Every process sample so far. */
  readonly samples: ProcessSample[];
  /** Pipeline run-time percentiles since the previous request (the child's histogram is reset). */
  pipelineStats(): Promise<LatencySummary>;
  /** Asks the child to stop gracefully; kills it (SIGKILL, by its pid) if it has not exited in 30 s. */
  stop(): Promise<void>;
}

const CHILD = siblingModule('executor-child', import.meta.url);

export function spawnExecutorChild(config: ChildConfig): ExecutorChild {
  const child: ChildProcess = fork(CHILD.path, [], {
    execArgv: [...CHILD.execArgv],
    env: { ...process.env, BENCH_CHILD_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let latest: ProgressReport | undefined;
  const samples: ProcessSample[] = [];
  let statsWaiter: ((s: LatencySummary) => void) | undefined;
  let readyResolve: () => void = () => undefined;
  let readyReject: (e: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    readyResolve = resolve;
    readyReject = reject;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('message', (raw) => {
    const m = raw as ChildReport;
    if (m.type === 'ready') readyResolve();
    else if (m.type === 'progress') latest = m;
    else if (m.type === 'sample') samples.push(m);
    else if (m.type === 'pipeline-stats') statsWaiter?.(m.summary);
    else if (m.type === 'failed') readyReject(new Error(`executor child failed: ${m.message}`));
  });
  child.once('exit', (code) => readyReject(new Error(`executor child exited (${code}) before it was ready`)));
  const send = (command: ParentCommand): void => {
    if (child.connected) child.send(command);
  };
  return {
    pid: child.pid!,
    ready,
    progress: () => latest,
    samples,
    pipelineStats() {
      return new Promise((resolve) => {
        statsWaiter = resolve;
        send({ type: 'pipeline-stats' });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      send({ type: 'stop' });
      const timer = setTimeout(() => {
        if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
      }, 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

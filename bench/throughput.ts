/**
 * Throughput through real Kafka: guarded calls/s of one in-process executor (full pipeline: registry,
 * zod, signed-principal verification, Redis rate limit and idempotency claim, audit then result
 * published) on a pre-published backlog, against baselines measured in the same run, alternating:
 *
 * - raw kafkajs pass-through writing one output per input (results), and two (results + audit),
 *   each as one produce request per fetched batch;
 * - raw kafkajs with the executor's publish pattern (per input: audit acknowledged, then result);
 * - the raw two-output pass-through on `@platformatic/kafka` instead of kafkajs (what the Kafka
 *   client alone costs; lib/raw-pass-through-platformatic.ts);
 * - BullMQ no-op jobs on the same Redis (bulk add, then one Worker with the same concurrency);
 * - Restate's one-step durable handler, invoked through its ingress with an idempotency key, the
 *   same number in flight (lib/restate-peer.ts; installed into a cache on first use);
 * - the executor as it was before two of its levers: without output coalescing (each publish its
 *   own produce request, as before libs/bus coalescingPublisher shipped), and without Redis
 *   auto-pipelining (one socket write per Redis command, as before SERVICE_REDIS_OPTIONS).
 *
 *   npx tsx bench/throughput.ts [--quick] [--calls N] [--repeats R] [--only toolgate,raw-one,…]
 *   npm run bench:build && node dist/bench/bench/throughput.js …   # compiled, as the executor ships
 *
 * Calls/s is measured from the first batch (or job) reaching the consumer to the last output
 * acknowledged by the broker (or job completed); group joins and pre-publishing are outside it.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from './lib/args.js';
import { NOOP_TOOL } from './lib/bench-tools.js';
import { runBullmq } from './lib/bullmq-baseline.js';
import { startPassThrough, type PassThroughMode } from './lib/raw-pass-through.js';
import {
  RESTATE_SERVER_VERSION,
  restateThroughput,
  startRestatePeer,
  type RestatePeer,
} from './lib/restate-peer.js';
import {
  alternate,
  cpuMeter,
  fmt,
  loadAverage,
  machineLine,
  median,
  note,
  ratio,
  say,
  table,
  within,
} from './lib/report.js';
import { runWithServers, type BenchServers } from './lib/servers.js';
import {
  createBacklog,
  createBenchKeys,
  drainBacklog,
  PARTITIONS,
  type BenchKeys,
  type BenchTopics,
} from './lib/toolgate-stack.js';

const args = parseArgs();
const CALLS = args.number('calls', args.quick ? 1_000 : 10_000);
const REPEATS = args.number('repeats', args.quick ? 1 : 3);
const MAX_CONCURRENCY = 16;
const PARTITIONS_CONCURRENTLY = 4;
const KEYS = 4_096;
const TIMEOUT_MS = 60_000 + CALLS * 20;

/** Fresh topics holding CALLS pre-published call events. */
function backlog(servers: BenchServers, keys: BenchKeys, what: string): Promise<BenchTopics> {
  return createBacklog(servers, keys, { what, tool: NOOP_TOOL, count: CALLS, keyCount: KEYS });
}

interface Variant {
  readonly coalescePublishes?: boolean;
  readonly redisAutoPipelining?: boolean;
}

/** This process's CPU µs per call, by candidate, for the candidates that run in this process. */
const cpuPerCall = new Map<string, number[]>();
const recordCpu = (name: string) => (micros: number) => {
  cpuPerCall.set(name, [...(cpuPerCall.get(name) ?? []), micros]);
};

async function toolgateRun(
  servers: BenchServers,
  keys: BenchKeys,
  name: string,
  variant: Variant = {},
): Promise<number> {
  return drainBacklog(servers, keys, await backlog(servers, keys, 'tp-toolgate'), {
    calls: CALLS,
    timeoutMs: TIMEOUT_MS,
    maxConcurrency: MAX_CONCURRENCY,
    partitionsConcurrently: PARTITIONS_CONCURRENTLY,
    failOnLoggedErrors: true,
    onCpuMicrosPerCall: recordCpu(name),
    ...variant,
  });
}

/** The second Kafka client's pass-through, loaded only by the runs that use it. */
const platformaticPassThrough = () => import('./lib/raw-pass-through-platformatic.js');

async function rawRun(
  servers: BenchServers,
  keys: BenchKeys,
  mode: PassThroughMode | 'two-platformatic',
): Promise<number> {
  const setup = await backlog(servers, keys, `tp-raw-${mode}`);
  const common = {
    brokers: servers.brokers,
    groupId: `${setup.prefix}-raw`,
    input: setup.topics.calls,
    results: setup.topics.results,
    audit: setup.topics.audit,
  };
  const raw =
    mode === 'two-platformatic'
      ? await (await platformaticPassThrough()).startPlatformaticPassThrough({ ...common, mode: 'two' })
      : await startPassThrough({
          ...common,
          mode,
          partitionsConcurrently: PARTITIONS_CONCURRENTLY,
          inFlight: MAX_CONCURRENCY,
        });
  try {
    const cpuSince = cpuMeter();
    await within(raw.untilForwarded(CALLS), TIMEOUT_MS, () => `raw ${mode} forwarded ${raw.forwarded()}`);
    recordCpu(`raw-${mode}`)(cpuSince(CALLS));
    return CALLS / ((raw.lastForwardedAtMs() - raw.firstBatchAtMs()) / 1000);
  } finally {
    await raw.stop();
    await setup.close();
  }
}

runWithServers(async (servers) => {
  const keys = createBenchKeys();
  say(`## Throughput through real Kafka${args.quick ? ' (quick)' : ''}`);
  say();
  say(machineLine(servers.kafkaVersion));
  say(
    `calls per run ${fmt(CALLS)}, rounds ${REPEATS} (candidates alternate, order rotating); ` +
      `calls topic ${PARTITIONS.calls} partitions, ${fmt(KEYS)} keys; executor maxConcurrency ${MAX_CONCURRENCY} × ` +
      `partitionsConcurrently ${PARTITIONS_CONCURRENTLY}; BullMQ concurrency ${MAX_CONCURRENCY * PARTITIONS_CONCURRENTLY}`,
  );
  say();
  const only = args.list('only');
  let restate: RestatePeer | undefined;
  const candidates = [
    { name: 'toolgate', run: () => toolgateRun(servers, keys, 'toolgate') },
    {
      name: 'toolgate-uncoalesced',
      run: () => toolgateRun(servers, keys, 'toolgate-uncoalesced', { coalescePublishes: false }),
    },
    {
      name: 'toolgate-unpipelined',
      run: () => toolgateRun(servers, keys, 'toolgate-unpipelined', { redisAutoPipelining: false }),
    },
    { name: 'raw-one', run: () => rawRun(servers, keys, 'one') },
    { name: 'raw-two', run: () => rawRun(servers, keys, 'two') },
    { name: 'raw-two-phased', run: () => rawRun(servers, keys, 'two-phased') },
    { name: 'raw-two-platformatic', run: () => rawRun(servers, keys, 'two-platformatic') },
    {
      name: 'bullmq',
      run: () =>
        runBullmq({
          redisUrl: servers.redisUrl,
          queueName: `bench-tp-${process.pid}-${randomUUID().slice(0, 8)}`,
          jobs: CALLS,
          concurrency: MAX_CONCURRENCY * PARTITIONS_CONCURRENTLY,
          timeoutMs: TIMEOUT_MS,
        }),
    },
    {
      name: 'restate',
      run: async () => {
        restate ??= await startRestatePeer();
        return within(
          restateThroughput(restate, CALLS, MAX_CONCURRENCY * PARTITIONS_CONCURRENTLY),
          TIMEOUT_MS,
          () => 'restate invocations',
        );
      },
    },
  ].filter((c) => only === undefined || only.includes(c.name));
  const results = await alternate(REPEATS, candidates).finally(() => restate?.close());
  const tg = median(results.get('toolgate') ?? []);
  const labels: Record<string, string> = {
    toolgate: 'toolgate executor (full pipeline; audit, then result; outputs coalesced)',
    'toolgate-uncoalesced': 'toolgate executor, one produce request per publish (before coalescing)',
    'toolgate-unpipelined': 'toolgate executor, one socket write per Redis command (before auto-pipelining)',
    'raw-one': 'raw kafkajs, 1 output per input, 1 send per batch',
    'raw-two': 'raw kafkajs, 2 outputs per input, 1 send per batch',
    'raw-two-phased': 'raw kafkajs, 2 outputs per input, audit then result per input',
    'raw-two-platformatic': 'raw @platformatic/kafka, 2 outputs per input, 1 send per arrived group',
    bullmq: 'BullMQ no-op jobs',
    restate: `Restate ${RESTATE_SERVER_VERSION}, one-step durable handler, ${MAX_CONCURRENCY * PARTITIONS_CONCURRENTLY} in flight`,
  };
  say(
    table(
      ['candidate', 'calls/s (median)', 'runs', 'toolgate ÷ candidate', 'this process, CPU µs per call'],
      [...results.entries()].map(([name, values]) => {
        const cpu = cpuPerCall.get(name);
        return [
          labels[name] ?? name,
          fmt(median(values)),
          values.map((v) => fmt(v)).join(', '),
          name === 'toolgate' ? '1.00×' : ratio(tg, median(values)),
          cpu === undefined ? '—' : `${fmt(median(cpu))} (${cpu.map((v) => fmt(v)).join(', ')})`,
        ];
      }),
    ),
  );
  say();
  note('ratios are of medians');
  note(
    'CPU per call: user + system time of this process (all threads) while it drained the backlog, ÷ calls; ' +
      '— where the work runs in another process (BullMQ is Redis-side too, Restate is its own server)',
  );
  say(`load average at end ${loadAverage()}`);
});

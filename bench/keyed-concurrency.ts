/**
 * Key-ordered concurrency on one partition: 1,000 resource keys, a tool that takes 0–5 ms (uniform),
 * through real Kafka. Key-ordered processing (calls with distinct keys run concurrently, at most 32
 * at once; equal keys one at a time in offset order) against partition-serial processing
 * (maxConcurrency 1), alternating — once through the whole executor (its keyed subscription,
 * pipeline, Redis, audit and result published per call) and once bare (the bus and the batch keyed
 * processor around the same wait).
 * A third executor variant sends each publish as its own produce request (the executor before
 * libs/bus coalescingPublisher shipped).
 *
 *   npx tsx bench/keyed-concurrency.ts [--quick] [--calls N] [--repeats R] [--concurrency C]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { processBatchByKey } from '../libs/bus/keyed-processor.js';
import { parseArgs } from './lib/args.js';
import { SLEEPY_TOOL } from './lib/bench-tools.js';
import { alternate, fmt, loadAverage, machineLine, median, nowMs, say, table, within } from './lib/report.js';
import { runWithServers, type BenchServers } from './lib/servers.js';
import {
  createBacklog,
  createBenchKeys,
  createBus,
  drainBacklog,
  type BenchKeys,
  type BenchTopics,
} from './lib/toolgate-stack.js';

const args = parseArgs();
const CALLS = args.number('calls', args.quick ? 300 : 2_000);
const REPEATS = args.number('repeats', args.quick ? 1 : 3);
const CONCURRENCY = args.number('concurrency', 32);
const KEYS = 1_000;
const ONE_PARTITION = { calls: 1, results: 1, audit: 1, dlq: 1 } as const;
const TIMEOUT_MS = 60_000 + CALLS * 30;

function backlog(servers: BenchServers, keys: BenchKeys, what: string): Promise<BenchTopics> {
  return createBacklog(servers, keys, {
    what,
    tool: SLEEPY_TOOL,
    count: CALLS,
    keyCount: KEYS,
    partitions: ONE_PARTITION,
  });
}

async function executorRun(
  servers: BenchServers,
  keys: BenchKeys,
  maxConcurrency: number,
  coalescePublishes = true,
): Promise<number> {
  return drainBacklog(servers, keys, await backlog(servers, keys, `keyed-ex-${maxConcurrency}`), {
    calls: CALLS,
    timeoutMs: TIMEOUT_MS,
    maxConcurrency,
    partitionsConcurrently: 1,
    coalescePublishes,
  });
}

async function bareRun(servers: BenchServers, keys: BenchKeys, maxConcurrency: number): Promise<number> {
  const setup = await backlog(servers, keys, `keyed-bare-${maxConcurrency}`);
  const bus = createBus(servers, `${setup.prefix}-bare`);
  let done = 0;
  let first = Number.NaN;
  let last = Number.NaN;
  try {
    const subscription = await bus.subscribe(
      { groupId: `${setup.prefix}-bare`, topics: [setup.topics.calls], fromBeginning: true },
      async (batch, control) => {
        if (Number.isNaN(first)) first = nowMs();
        await processBatchByKey(
          batch,
          control,
          async () => {
            await sleep(Math.random() * 5);
            done += 1;
            last = nowMs();
          },
          { maxConcurrency },
        );
      },
    );
    try {
      await within(
        (async () => {
          while (done < CALLS) await sleep(20);
        })(),
        TIMEOUT_MS,
        () => `handled ${done}`,
      );
    } finally {
      await subscription.stop();
    }
    return CALLS / ((last - first) / 1000);
  } finally {
    await bus.close();
    await setup.close();
  }
}

runWithServers(async (servers) => {
  const keys = createBenchKeys();
  say(`## Key-ordered concurrency on one partition${args.quick ? ' (quick)' : ''}`);
  say();
  say(machineLine(servers.kafkaVersion));
  say(
    `calls per run ${fmt(CALLS)} over ${fmt(KEYS)} keys on 1 partition, tool 0–5 ms uniform; rounds ${REPEATS} ` +
      `(alternating, order rotating)`,
  );
  say();
  const c = String(CONCURRENCY);
  const results = await alternate(REPEATS, [
    { name: `executor-${c}`, run: () => executorRun(servers, keys, CONCURRENCY) },
    { name: 'executor-1', run: () => executorRun(servers, keys, 1) },
    { name: `uncoalesced-${c}`, run: () => executorRun(servers, keys, CONCURRENCY, false) },
    { name: `bare-${c}`, run: () => bareRun(servers, keys, CONCURRENCY) },
    { name: 'bare-1', run: () => bareRun(servers, keys, 1) },
  ]);
  const m = (name: string): number => median(results.get(name)!);
  const row = (label: string, name: string, base: string): string[] => [
    label,
    fmt(m(name)),
    results
      .get(name)!
      .map((v) => fmt(v))
      .join(', '),
    name === base ? '1.00×' : `${fmt(m(name) / m(base), 2)}×`,
  ];
  say(
    table(
      ['processing', 'calls/s (median)', 'runs', '÷ partition-serial'],
      [
        row(`executor (keyed subscription) maxConcurrency ${c}`, `executor-${c}`, 'executor-1'),
        row('executor, partition-serial (maxConcurrency 1)', 'executor-1', 'executor-1'),
        row(
          `executor maxConcurrency ${c}, one produce request per publish (before coalescing)`,
          `uncoalesced-${c}`,
          'executor-1',
        ),
        row(`bare bus + processBatchByKey maxConcurrency ${c}`, `bare-${c}`, 'bare-1'),
        row('bare bus, partition-serial (maxConcurrency 1)', 'bare-1', 'bare-1'),
      ],
    ),
  );
  say();
  say(`load average at end ${loadAverage()}`);
});

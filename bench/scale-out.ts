/**
 * Scale-out: calls/s of 1, 2 and 4 executor processes (child processes, one consumer group) on a
 * 12-partition calls topic, alternating, several rounds.
 *
 *   npx tsx bench/scale-out.ts [--quick] [--calls N] [--repeats R]
 *
 * The group is let settle first (every partition owned, assignments stable for 1.5 s), then the
 * calls are published in one burst; calls/s runs from the first batch any process received to the
 * last result any process had acknowledged. A rebalance in the middle would measure the rebalance,
 * not the executors; publishing after the group settled avoids it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from './lib/args.js';
import { NOOP_TOOL } from './lib/bench-tools.js';
import { childPlacement, spawnExecutorChild, type ExecutorChild } from './lib/child-protocol.js';
import { alternate, fmt, loadAverage, machineLine, median, say, table, within } from './lib/report.js';
import { runWithServers, type BenchServers } from './lib/servers.js';
import {
  createBenchKeys,
  createBenchTopics,
  PARTITIONS,
  publishBacklog,
  runName,
  type BenchKeys,
} from './lib/toolgate-stack.js';

const args = parseArgs();
const CALLS = args.number('calls', args.quick ? 600 : 6_000);
const REPEATS = args.number('repeats', args.quick ? 1 : 3);
const PROCESSES = [1, 2, 4] as const;
const MAX_CONCURRENCY = 16;
const PARTITIONS_CONCURRENTLY = 4;
const TIMEOUT_MS = 60_000 + CALLS * 20;

async function settled(children: readonly ExecutorChild[]): Promise<void> {
  let previous = '';
  let stableSince = Date.now();
  const deadline = Date.now() + 90_000;
  for (;;) {
    const owned = children.map((c) => [...(c.progress()?.assignment ?? [])].sort((a, b) => a - b));
    const all = owned.flat();
    const complete =
      all.length === PARTITIONS.calls && new Set(all).size === all.length && owned.every((o) => o.length > 0);
    const now = JSON.stringify(owned);
    if (now !== previous) {
      previous = now;
      stableSince = Date.now();
    } else if (complete && Date.now() - stableSince >= 1_500) {
      return;
    }
    if (Date.now() > deadline) throw new Error(`the group did not settle: ${now}`);
    await sleep(100);
  }
}

async function run(servers: BenchServers, keys: BenchKeys, processes: number): Promise<number> {
  const setup = await createBenchTopics(servers, runName(`scale-${processes}`));
  const children: ExecutorChild[] = [];
  try {
    for (let i = 0; i < processes; i++) {
      children.push(
        spawnExecutorChild({
          mode: 'toolgate',
          ...childPlacement(servers, keys, setup, `-${i}`),
          maxConcurrency: MAX_CONCURRENCY,
          partitionsConcurrently: PARTITIONS_CONCURRENTLY,
        }),
      );
    }
    await Promise.all(children.map((c) => c.ready));
    await settled(children);
    await publishBacklog(setup, keys, { tool: NOOP_TOOL, count: CALLS, keyCount: 4_096 });
    const done = (): number => children.reduce((sum, c) => sum + (c.progress()?.done ?? 0), 0);
    await within(
      (async () => {
        while (done() < CALLS) await sleep(100);
      })(),
      TIMEOUT_MS,
      () => `${processes} processes published ${done()} of ${CALLS} results`,
    );
    const reports = children.map((c) => c.progress()!);
    const bad = reports.reduce((sum, r) => sum + r.errors + r.notSuccess, 0);
    if (bad > 0) throw new Error(`${bad} calls did not succeed or errors were logged`);
    const first = Math.min(...reports.map((r) => r.firstBatchAtMs).filter((t) => !Number.isNaN(t)));
    const last = Math.max(...reports.map((r) => r.lastDoneAtMs).filter((t) => !Number.isNaN(t)));
    return CALLS / ((last - first) / 1000);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await setup.close();
  }
}

runWithServers(async (servers) => {
  const keys = createBenchKeys();
  say(`## Scale-out: executor processes on ${PARTITIONS.calls} partitions${args.quick ? ' (quick)' : ''}`);
  say();
  say(machineLine(servers.kafkaVersion));
  say(
    `calls per run ${fmt(CALLS)}, rounds ${REPEATS} (alternating, order rotating); each process ` +
      `maxConcurrency ${MAX_CONCURRENCY} × partitionsConcurrently ${PARTITIONS_CONCURRENTLY}; ` +
      `the broker, Redis and the registry share the same cores`,
  );
  say();
  const results = await alternate(
    REPEATS,
    PROCESSES.map((n) => ({ name: String(n), run: () => run(servers, keys, n) })),
  );
  const one = median(results.get('1')!);
  say(
    table(
      ['executor processes', 'calls/s (median)', 'runs', '÷ 1 process'],
      PROCESSES.map((n) => {
        const values = results.get(String(n))!;
        return [
          String(n),
          fmt(median(values)),
          values.map((v) => fmt(v)).join(', '),
          `${fmt(median(values) / one, 2)}×`,
        ];
      }),
    ),
  );
  say();
  say(`load average at end ${loadAverage()}`);
});

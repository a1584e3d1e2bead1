/**
 * Soak at overload: calls offered at `--overload` (default 10) times the executor's measured
 * capacity for `--minutes` (default 10), then the load stops and the backlog drains for
 * `--drain-minutes` (default 2). Prints, every sample: the executor process's RSS and heap, its
 * event-loop delay (perf_hooks.monitorEventLoopDelay), results so far and the group's consumer lag.
 *
 *   npx tsx bench/soak.ts [--quick] [--minutes M] [--overload X] [--capacity C] [--drain-minutes D]
 *
 * What it shows: whether the executor's memory and event loop stay bounded while the backlog grows
 * without bound (Kafka holds the backlog; the executor fetches only what it works on), and how fast
 * the lag drains once the load stops. It is not part of `npm run bench`: `npm run bench:soak`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel } from 'kafkajs';
import { parseArgs } from './lib/args.js';
import { NOOP_TOOL } from './lib/bench-tools.js';
import { childPlacement, spawnExecutorChild, type ProcessSample } from './lib/child-protocol.js';
import { fmt, loadAverage, machineLine, median, note, nowMs, say, table, within } from './lib/report.js';
import { runWithServers } from './lib/servers.js';
import {
  buildCallMessages,
  createBenchKeys,
  createBenchTopics,
  PARTITIONS,
  publishChunked,
  runName,
} from './lib/toolgate-stack.js';

const args = parseArgs();
const MINUTES = args.number('minutes', args.quick ? 0.5 : 10);
const DRAIN_MINUTES = args.number('drain-minutes', args.quick ? 0.25 : 2);
const OVERLOAD = args.number('overload', 10);
const SAMPLE_MS = args.quick ? 2_000 : 10_000;
const MAX_CONCURRENCY = 16;
const PARTITIONS_CONCURRENTLY = 4;

runWithServers(async (servers) => {
  const keys = createBenchKeys();
  const prefix = runName('soak');
  const setup = await createBenchTopics(servers, prefix);
  const executor = spawnExecutorChild({
    mode: 'toolgate',
    ...childPlacement(servers, keys, setup),
    maxConcurrency: MAX_CONCURRENCY,
    partitionsConcurrently: PARTITIONS_CONCURRENTLY,
    // Results outlive any redelivery here; a short TTL keeps the shared Redis small over a long soak.
    resultTtlMs: 300_000,
    sampleIntervalMs: SAMPLE_MS,
  });
  const admin = new Kafka({
    clientId: `${prefix}-lag`,
    brokers: servers.brokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  try {
    await executor.ready;
    await admin.connect();
    const groupId = `${prefix}-executors`;
    const lag = async (): Promise<number> => {
      const [ends, committed] = await Promise.all([
        admin.fetchTopicOffsets(setup.topics.calls),
        admin.fetchOffsets({ groupId, topics: [setup.topics.calls] }),
      ]);
      const done = new Map(committed[0]!.partitions.map((p) => [p.partition, BigInt(p.offset)]));
      let total = 0n;
      for (const end of ends) {
        const at = done.get(end.partition) ?? -1n;
        total += BigInt(end.high) - (at < 0n ? BigInt(end.low) : at);
      }
      return Number(total);
    };

    let index = 0;
    let assertion = await keys.assertion(7_200);
    const publish = async (count: number): Promise<void> => {
      const messages = await buildCallMessages(setup.codec, {
        runId: prefix,
        tool: NOOP_TOOL,
        firstIndex: index,
        count,
        keyCount: 4_096,
        assertion,
        topics: setup.topics,
        replyPartitions: PARTITIONS.results,
      });
      index += count;
      await publishChunked(setup.bus, setup.topics.calls, messages);
    };

    // Capacity: the executor drains a pre-published burst.
    const burst = args.quick ? 300 : 1_500;
    const t0 = nowMs();
    await publish(burst);
    await within(
      (async () => {
        while ((executor.progress()?.done ?? 0) < burst) await sleep(50);
      })(),
      300_000,
      () => `capacity burst: ${executor.progress()?.done ?? 0} of ${burst}`,
    );
    const capacity = args.number('capacity', burst / ((executor.progress()!.lastDoneAtMs - t0) / 1000));
    const rate = OVERLOAD * capacity;

    say(`## Soak at ${OVERLOAD}× overload${args.quick ? ' (quick)' : ''}`);
    say();
    say(machineLine(servers.kafkaVersion));
    say(
      `capacity ${fmt(capacity)} calls/s (burst of ${fmt(burst)}), offered ${fmt(rate)} calls/s for ${MINUTES} min, ` +
        `then ${DRAIN_MINUTES} min of drain; executor in a child process, maxConcurrency ${MAX_CONCURRENCY} × ` +
        `partitionsConcurrently ${PARTITIONS_CONCURRENTLY}; samples every ${SAMPLE_MS / 1000} s`,
    );
    say();

    interface Row {
      readonly t: number;
      readonly phase: 'load' | 'drain';
      readonly offered: number;
      readonly lag: number;
      readonly sample: ProcessSample | undefined;
    }
    const rows: Row[] = [];
    const start = nowMs();
    const seconds = (): number => (nowMs() - start) / 1000;
    const sampleRow = async (phase: Row['phase']): Promise<void> => {
      const row: Row = {
        t: seconds(),
        phase,
        offered: index - burst,
        lag: await lag(),
        sample: executor.samples[executor.samples.length - 1],
      };
      rows.push(row);
      const s = row.sample;
      note(
        `${fmt(row.t)} s ${phase}: offered ${fmt(row.offered)}, results ${fmt(s?.done ?? 0)}, lag ${fmt(row.lag)}, ` +
          `rss ${fmt(s?.rssMb ?? 0)} MB, loop p99 ${fmt(s?.eventLoopDelay.p99 ?? 0, 1)} ms`,
      );
    };

    // Load: every 100 ms, publish whatever the schedule says is due by now.
    const loadEnd = start + MINUTES * 60_000;
    let nextSample = start + SAMPLE_MS;
    const doneAtLoadStart = executor.progress()?.done ?? 0;
    while (nowMs() < loadEnd) {
      const due = Math.floor(((nowMs() - start) / 1000) * rate) - (index - burst);
      if (due > 0) await publish(Math.min(due, Math.ceil(rate)));
      if (nowMs() >= nextSample) {
        nextSample += SAMPLE_MS;
        await sampleRow('load');
      }
      if (index % 200_000 < Math.ceil(rate)) assertion = await keys.assertion(7_200);
      await sleep(100);
    }
    const loadSeconds = seconds();
    const doneAtLoadEnd = executor.progress()?.done ?? 0;
    const lagAtLoadEnd = await lag();

    // Drain: no more load; the lag falls at the executor's pace.
    const drainStart = nowMs();
    const drainEnd = drainStart + DRAIN_MINUTES * 60_000;
    let lastLag = lagAtLoadEnd;
    while (nowMs() < drainEnd && lastLag > 0) {
      await sleep(Math.min(SAMPLE_MS, Math.max(0, drainEnd - nowMs())));
      await sampleRow('drain');
      lastLag = rows[rows.length - 1]!.lag;
    }
    const drainSeconds = (nowMs() - drainStart) / 1000;
    const drained = lagAtLoadEnd - lastLag;
    const drainRate = drained / drainSeconds;

    say(
      table(
        [
          't s',
          'phase',
          'offered',
          'results',
          'consumer lag',
          'RSS MB',
          'heap MB',
          'loop p50 ms',
          'loop p99 ms',
          'loop max ms',
        ],
        rows.map((r) => [
          fmt(r.t),
          r.phase,
          fmt(r.offered),
          fmt(r.sample?.done ?? 0),
          fmt(r.lag),
          fmt(r.sample?.rssMb ?? Number.NaN),
          fmt(r.sample?.heapUsedMb ?? Number.NaN),
          fmt(r.sample?.eventLoopDelay.p50 ?? Number.NaN, 1),
          fmt(r.sample?.eventLoopDelay.p99 ?? Number.NaN, 1),
          fmt(r.sample?.eventLoopDelay.max ?? Number.NaN, 1),
        ]),
      ),
    );
    say();
    const loadRows = rows.filter((r) => r.phase === 'load' && r.sample !== undefined);
    const rss = loadRows.map((r) => r.sample!.rssMb);
    const p99s = rows.filter((r) => r.sample !== undefined).map((r) => r.sample!.eventLoopDelay.p99);
    const offeredRate = (index - burst) / loadSeconds;
    const servedRate = (doneAtLoadEnd - doneAtLoadStart) / loadSeconds;
    say(
      `offered ${fmt(offeredRate)} calls/s (${fmt(offeredRate / capacity, 1)}× capacity), served ${fmt(servedRate)} calls/s ` +
        `under overload (${fmt(servedRate / capacity, 2)}× the unloaded capacity); RSS during load ${fmt(Math.min(...rss))}–` +
        `${fmt(Math.max(...rss))} MB (first ${fmt(rss[0] ?? Number.NaN)}, last ${fmt(rss[rss.length - 1] ?? Number.NaN)}); ` +
        `event-loop p99 median ${fmt(median(p99s), 1)} ms, worst ${fmt(Math.max(...p99s), 1)} ms`,
    );
    say(
      `lag at load end ${fmt(lagAtLoadEnd)}; drained ${fmt(drained)} in ${fmt(drainSeconds)} s (${fmt(drainRate)} calls/s); ` +
        (lastLag === 0
          ? 'the backlog emptied'
          : `${fmt(lastLag)} left, about ${fmt(lastLag / Math.max(drainRate, 1) / 60, 1)} min more at that pace`),
    );
    say();
    say(`load average at end ${loadAverage()}`);
  } finally {
    await executor.stop();
    await admin.disconnect().catch(() => undefined);
    await setup.close();
  }
});

/**
 * Open-loop latency: calls published at a fixed rate by the agent SDK (runTurn, one call per turn)
 * to an executor child process, end to end (SDK publish → result received at the SDK), measured
 * from each call's intended send time into an HDR histogram; against a raw Kafka round trip at the
 * same rate (a kafkajs producer → raw pass-through child → kafkajs consumer), alternating.
 *
 *   npx tsx bench/latency.ts [--quick] [--rate R] [--seconds S] [--repeats N]
 *
 * The rate: 50% of the lower of the two peaks measured first in this run (toolgate's and the raw
 * pass-through's, each draining a burst of pre-published calls), unless --rate is given. Half the
 * faster system's peak would exceed the slower one's capacity, and an open loop above capacity
 * only measures how long the queue was allowed to grow.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from './lib/args.js';
import { NOOP_TOOL } from './lib/bench-tools.js';
import type { ExecutorChild } from './lib/child-protocol.js';
import { newHistogram, recordMs, summarize, type LatencySummary } from './lib/latency-histogram.js';
import { openLoop } from './lib/open-loop.js';
import {
  alternate,
  fmt,
  loadAverage,
  machineLine,
  median,
  note,
  nowMs,
  say,
  table,
  within,
} from './lib/report.js';
import { openRoundTripRig } from './lib/round-trip-rig.js';
import { runWithServers } from './lib/servers.js';
import { buildCallMessages, createBenchKeys, PARTITIONS, publishChunked } from './lib/toolgate-stack.js';

const args = parseArgs();
const SECONDS = args.number('seconds', args.quick ? 5 : 30);
const WARMUP_MS = args.quick ? 1_000 : 3_000;
const REPEATS = args.number('repeats', args.quick ? 1 : 3);
const MAX_CONCURRENCY = 16;
const PARTITIONS_CONCURRENTLY = 4;

runWithServers(async (servers) => {
  const keys = createBenchKeys();
  const rig = await openRoundTripRig(servers, keys, {
    name: 'lat',
    maxConcurrency: MAX_CONCURRENCY,
    partitionsConcurrently: PARTITIONS_CONCURRENTLY,
  });
  const { executor, echo, toolgate: tg, raw } = rig;
  try {
    // Peaks: each system drains a burst of pre-published calls.
    const peak = async (c: ExecutorChild, publish: () => Promise<void>, count: number): Promise<number> => {
      const before = c.progress()?.done ?? 0;
      const t0 = nowMs();
      await publish();
      await within(
        (async () => {
          while ((c.progress()?.done ?? 0) < before + count) await sleep(50);
        })(),
        120_000,
        () => `peak burst: ${c.progress()?.done ?? 0 - before} of ${count}`,
      );
      return count / ((c.progress()!.lastDoneAtMs - t0) / 1000);
    };
    const tgBurst = args.quick ? 500 : 2_000;
    const rawBurst = args.quick ? 2_000 : 10_000;
    const tgPeak = await peak(
      executor,
      async () =>
        publishChunked(
          tg.bus,
          tg.topics.calls,
          await buildCallMessages(tg.codec, {
            runId: `${tg.prefix}-peak`,
            tool: NOOP_TOOL,
            firstIndex: 0,
            count: tgBurst,
            keyCount: 4_096,
            assertion: await keys.assertion(3_600),
            topics: tg.topics,
            replyPartitions: PARTITIONS.results,
          }),
        ),
      tgBurst,
    );
    const rawPeak = await peak(
      echo,
      () =>
        publishChunked(
          raw.bus,
          raw.topics.calls,
          Array.from({ length: rawBurst }, (_, i) => ({
            key: `k${i % 4_096}`,
            value: rig.rawValue(`peak-${i}`),
          })),
        ),
      rawBurst,
    );
    const rate = args.number('rate', Math.max(1, Math.floor(0.5 * Math.min(tgPeak, rawPeak))));

    say(`## Open-loop latency${args.quick ? ' (quick)' : ''}`);
    say();
    say(machineLine(servers.kafkaVersion));
    say(
      `measured peaks (burst drain, including the publish): toolgate ${fmt(tgPeak)} calls/s, raw pass-through ` +
        `${fmt(rawPeak)} records/s; rate ${fmt(rate)}/s for both; ${SECONDS} s per run after ${WARMUP_MS / 1000} s ` +
        `warm-up; ${REPEATS} rounds alternating; executor maxConcurrency ${MAX_CONCURRENCY} × partitionsConcurrently ` +
        `${PARTITIONS_CONCURRENTLY}`,
    );
    say();

    let runNo = 0;
    const summaries = {
      toolgate: [] as LatencySummary[],
      raw: [] as LatencySummary[],
      pipeline: [] as LatencySummary[],
    };
    const lags: number[] = [];
    let notSuccess = 0;

    const toolgateRun = async (): Promise<number> => {
      runNo += 1;
      const h = newHistogram();
      const pending: Promise<void>[] = [];
      await executor.pipelineStats(); // resets the child's histogram
      const durationMs = SECONDS * 1000 + WARMUP_MS;
      let warmEnd = Number.POSITIVE_INFINITY;
      const sent = await openLoop({
        rate,
        durationMs,
        send: (i, intended) => {
          if (i === 0) warmEnd = intended + WARMUP_MS;
          pending.push(
            rig.toolgateCall(`r${runNo}-t${i}`, i).then(({ atMs, success }) => {
              if (!success) notSuccess += 1;
              if (intended >= warmEnd) recordMs(h, atMs - intended);
            }),
          );
        },
      });
      await Promise.all(pending);
      lags.push(sent.maxSendLagMs);
      const s = summarize(h);
      summaries.toolgate.push(s);
      summaries.pipeline.push(await executor.pipelineStats());
      return s.p99;
    };

    const rawRun = async (): Promise<number> => {
      runNo += 1;
      const h = newHistogram();
      const pending: Promise<void>[] = [];
      let warmEnd = Number.POSITIVE_INFINITY;
      const sent = await openLoop({
        rate,
        durationMs: SECONDS * 1000 + WARMUP_MS,
        send: (i, intended) => {
          if (i === 0) warmEnd = intended + WARMUP_MS;
          const tag = `r${runNo}-${i}`;
          pending.push(
            rig.rawCall(tag, `k${i % 4_096}`).then((at) => {
              if (intended >= warmEnd) recordMs(h, at - intended);
            }),
          );
        },
      });
      await within(Promise.all(pending), 120_000, () => `raw echoes missing: ${rig.rawPending()}`);
      lags.push(sent.maxSendLagMs);
      const s = summarize(h);
      summaries.raw.push(s);
      return s.p99;
    };

    await alternate(REPEATS, [
      { name: 'toolgate p99 ms', run: toolgateRun },
      { name: 'raw p99 ms', run: rawRun },
    ]);
    if (notSuccess > 0) note(`${notSuccess} toolgate calls did not end SUCCESS`);

    const med = (list: LatencySummary[], k: keyof LatencySummary): number => median(list.map((s) => s[k]));
    const row = (name: string, list: LatencySummary[]): string[] => [
      name,
      fmt(med(list, 'count')),
      fmt(med(list, 'p50'), 2),
      fmt(med(list, 'p99'), 2),
      fmt(med(list, 'p999'), 2),
      fmt(med(list, 'max'), 2),
      list.map((s) => `${fmt(s.p50, 1)}/${fmt(s.p99, 1)}/${fmt(s.p999, 1)}`).join(', '),
    ];
    say(
      table(
        ['path', 'samples/run', 'p50 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'runs (p50/p99/p99.9)'],
        [
          row('toolgate end to end (SDK runTurn → result at the SDK)', summaries.toolgate),
          row('raw Kafka round trip (producer → pass-through → consumer)', summaries.raw),
          row('of which: guard pipeline run in the executor', summaries.pipeline),
        ],
      ),
    );
    say();
    const ratioOf = (k: 'p50' | 'p99' | 'p999'): string =>
      `${fmt(med(summaries.toolgate, k) / med(summaries.raw, k), 2)}×`;
    say(
      `toolgate ÷ raw: p50 ${ratioOf('p50')}, p99 ${ratioOf('p99')}, p99.9 ${ratioOf('p999')}; ` +
        `pipeline share of the toolgate p50: ${fmt((100 * med(summaries.pipeline, 'p50')) / med(summaries.toolgate, 'p50'), 0)}%; ` +
        `generator's worst lag behind schedule ${fmt(Math.max(...lags), 1)} ms; calls not SUCCESS: ${notSuccess}`,
    );
    say();
    say(`load average at end ${loadAverage()}`);
  } finally {
    await rig.close();
  }
});

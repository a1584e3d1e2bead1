/**
 * Single-call latency, one call at a time: an agent loop waiting on its tool. Each call is sent only
 * after the previous one's result came back (closed loop, nothing queued), through the agent SDK to
 * an executor child process and back; against, alternating rounds in the same run, a raw Kafka
 * round trip sent the same way (a kafkajs producer → raw pass-through child → kafkajs consumer), the
 * same raw round trip on `@platformatic/kafka` (what the Kafka client alone costs), and Restate's
 * one-step durable handler invoked through its ingress with an idempotency key (restate-peer.ts;
 * installed into a cache on first use; `--no-restate` leaves it out).
 *
 *   npx tsx bench/single-call.ts [--quick] [--calls N] [--repeats R] [--no-restate]
 *
 * The goal it reports against: toolgate's p50 within 3 ms of the raw round trip's, its p99 within
 * 10 ms of the raw p99.
 */
import { parseArgs } from './lib/args.js';
import { newHistogram, recordMs, summarize, type LatencySummary } from './lib/latency-histogram.js';
import { alternate, fmt, loadAverage, machineLine, median, note, nowMs, say, table } from './lib/report.js';
import { startRestatePeer, type RestatePeer } from './lib/restate-peer.js';
import { openRoundTripRig } from './lib/round-trip-rig.js';
import { runWithServers } from './lib/servers.js';
import { createBenchKeys } from './lib/toolgate-stack.js';

const args = parseArgs();
const CALLS = args.number('calls', args.quick ? 100 : 1_000);
const REPEATS = args.number('repeats', args.quick ? 1 : 3);
/** Calls before each round's measurement (connections warm, JIT done). */
const WARMUP = args.quick ? 20 : 100;
const WITH_RESTATE = !process.argv.includes('--no-restate');

runWithServers(async (servers) => {
  const rig = await openRoundTripRig(servers, createBenchKeys(), {
    name: 'single',
    maxConcurrency: 16,
    partitionsConcurrently: 4,
    withPlatformatic: true,
  });
  const platformaticCall = rig.platformaticCall!;
  let restate: RestatePeer | undefined;
  try {
    if (WITH_RESTATE) restate = await startRestatePeer();
    say(`## Single-call latency, one call at a time${args.quick ? ' (quick)' : ''}`);
    say();
    say(machineLine(servers.kafkaVersion));
    say(
      `${CALLS} calls per round after ${WARMUP} warm-up calls, each sent when the previous one's answer ` +
        `arrived; ${REPEATS} rounds alternating; load average at start ${loadAverage()}`,
    );
    say();

    let runNo = 0;
    let notSuccess = 0;
    const summaries = {
      toolgate: [] as LatencySummary[],
      raw: [] as LatencySummary[],
      platformatic: [] as LatencySummary[],
      restate: [] as LatencySummary[],
    };

    const closedLoop = async (
      one: (i: number) => Promise<number>,
      into: LatencySummary[],
    ): Promise<number> => {
      runNo += 1;
      const h = newHistogram();
      for (let i = 0; i < WARMUP + CALLS; i++) {
        const sentAt = nowMs();
        const doneAt = await one(i);
        if (i >= WARMUP) recordMs(h, doneAt - sentAt);
      }
      const s = summarize(h);
      into.push(s);
      return s.p50;
    };

    await alternate(REPEATS, [
      {
        name: 'toolgate p50 ms',
        run: () =>
          closedLoop(async (i) => {
            const { atMs, success } = await rig.toolgateCall(`s${runNo}-t${i}`, i);
            if (!success) notSuccess += 1;
            return atMs;
          }, summaries.toolgate),
      },
      {
        name: 'raw p50 ms',
        run: () => closedLoop((i) => rig.rawCall(`s${runNo}-${i}`, `k${i % 4_096}`), summaries.raw),
      },
      {
        name: 'raw platformatic p50 ms',
        run: () =>
          closedLoop((i) => platformaticCall(`s${runNo}-${i}`, `k${i % 4_096}`), summaries.platformatic),
      },
      ...(restate === undefined
        ? []
        : [
            {
              name: 'restate p50 ms',
              run: () =>
                closedLoop(async (i) => {
                  await restate!.call(i, `s${runNo}-${i}-${process.pid}`);
                  return nowMs();
                }, summaries.restate),
            },
          ]),
    ]);
    if (notSuccess > 0) note(`${notSuccess} toolgate calls did not end SUCCESS`);

    const med = (list: LatencySummary[], k: keyof LatencySummary): number => median(list.map((s) => s[k]));
    const row = (name: string, list: LatencySummary[]): string[] => [
      name,
      fmt(med(list, 'p50'), 2),
      fmt(med(list, 'p99'), 2),
      fmt(med(list, 'max'), 2),
      list.map((s) => `${fmt(s.p50, 1)}/${fmt(s.p99, 1)}`).join(', '),
    ];
    say(
      table(
        ['path', 'p50 ms', 'p99 ms', 'max ms', 'runs (p50/p99)'],
        [
          row('toolgate (SDK runTurn → executor → result at the SDK)', summaries.toolgate),
          row('raw Kafka round trip (producer → pass-through → consumer)', summaries.raw),
          row('the same raw round trip on @platformatic/kafka', summaries.platformatic),
          ...(restate === undefined
            ? []
            : [
                row(
                  `Restate ${restate.version}, one-step durable handler (ingress, idempotency key)`,
                  summaries.restate,
                ),
              ]),
        ],
      ),
    );
    say();
    const gap = (k: 'p50' | 'p99'): string => {
      const ms = med(summaries.toolgate, k) - med(summaries.raw, k);
      return `${ms < 0 ? '−' : '+'}${fmt(Math.abs(ms), 2)} ms`;
    };
    say(
      `toolgate − raw: p50 ${gap('p50')} (goal ≤ +3 ms), p99 ${gap('p99')} (goal ≤ +10 ms); ` +
        `calls not SUCCESS: ${notSuccess}; load average at end ${loadAverage()}`,
    );
    if (restate !== undefined) {
      const vs = (k: 'p50' | 'p99'): string =>
        `${fmt(med(summaries.toolgate, k) / med(summaries.restate, k), 2)}×`;
      say(`toolgate ÷ Restate: p50 ${vs('p50')}, p99 ${vs('p99')} (goal: no worse, ≤ 1.00×)`);
    }
  } finally {
    await restate?.close();
    await rig.close();
  }
});

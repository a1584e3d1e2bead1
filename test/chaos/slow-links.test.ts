import { describe, expect, it } from 'vitest';
import { judgeCalls, type CallVerdict } from './call-verdict.js';
import { safetyCalls, streamCalls } from './call-stream.js';
import { chaosScale, scaledTimeout } from './chaos-scale.js';
import type { LinkFaults } from './fault-proxy.js';
import { complaints } from './log-tail.js';
import { labScene } from './network-lab.js';
import { effectCounts } from './safety-ledger.js';

/**
 * Slow, flaky links. Two executor children on two hosts run the same number of calls twice: once on
 * clean links, once with 50–200 ms added to every chunk in both directions on every link of theirs
 * (broker, Redis, Postgres, registry) and a TCP reset every 400th chunk through each link's proxy. The figures of both runs are
 * printed side by side (throughput, answer latency p50/p99). Checks on the slow run: 0 duplicate
 * effects, 0 lost calls, no contradicting answers, every UNRESOLVED with its case.
 */
const SCALE = chaosScale();
const CALLS = SCALE.networkCalls;
const KEYS = 48;
const SLOW: LinkFaults = { latencyMs: [50, 200], resetEvery: 400 };

const scene = labScene('chaos_slow', {
  executorEnv: { CHAOS_WORK_MS: '20', CHAOS_TOOL_TIMEOUT_MS: '5000' },
  executors: 2,
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface RunFigures {
  readonly verdict: CallVerdict;
  readonly figures: Record<string, unknown>;
}

async function runOnce(tag: string): Promise<RunFigures> {
  const calls = await safetyCalls(scene.lab, tag, CALLS, KEYS);
  const run = streamCalls(scene.lab, calls, scene.results, 2_000);
  await run.published;
  const allMs = await run.allAnswered(scaledTimeout(100_000), () =>
    scene.lab.fleet.all.map((c) => complaints(c.name, c.output)).join('\n'),
  );
  await sleep(1_000);
  const verdict = judgeCalls(
    calls,
    scene.results.events,
    scene.dlq.events,
    await effectCounts(scene.lab.pool),
  );
  return {
    verdict,
    figures: {
      allAnsweredMs: allMs,
      callsPerSecond: Math.round((CALLS / allMs) * 10_000) / 10,
      latencyMs: run.latency(),
      duplicateEffects: verdict.duplicateEffects.length,
      lost: verdict.lost.length,
      contradictions: verdict.contradictions.length,
      reruns: verdict.reruns,
      openCases: verdict.openCases,
      outcomes: verdict.outcomes,
    },
  };
}

describe('slow links', () => {
  it(
    '50–200 ms on every executor link plus occasional resets: no duplicate, nothing lost; figures beside a clean run',
    async () => {
      const clean = await runOnce('clean');
      const sources = scene.lab.hosts.flatMap((h) => [
        scene.lab.net.hostAddress(h, 'k'),
        scene.lab.net.hostAddress(h, 'd'),
      ]);
      const proxies = [
        scene.lab.kafkaProxy,
        scene.lab.redisProxy,
        scene.lab.pgProxy,
        scene.lab.registryProxy,
      ];
      const resetsBefore = proxies.map((p) => p.stats().resets);
      for (const p of proxies) p.setFaults(SLOW, sources);
      let slow: RunFigures;
      try {
        slow = await runOnce('slow');
      } finally {
        for (const p of proxies) p.setFaults({}, sources);
      }
      const resets = Object.fromEntries(
        ['kafka', 'redis', 'postgres', 'registry'].map((n, i) => [
          n,
          proxies[i]!.stats().resets - resetsBefore[i]!,
        ]),
      );
      console.log(
        `[chaos slow-links] ${JSON.stringify({
          scale: SCALE.name,
          calls: CALLS,
          keys: KEYS,
          faults: SLOW,
          clean: clean.figures,
          slow: { ...slow.figures, resets },
        })}`,
      );
      for (const { verdict } of [clean, slow]) {
        expect(verdict.duplicateEffects).toEqual([]);
        expect(verdict.lost).toEqual([]);
        expect(verdict.contradictions).toEqual([]);
        expect(verdict.unresolvedWithoutCase).toEqual([]);
      }
      expect(Object.values(resets).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    },
    scaledTimeout(200_000),
  );
});

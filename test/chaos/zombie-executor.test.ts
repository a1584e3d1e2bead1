import { describe, expect, it } from 'vitest';
import type { ExecutorProcess } from '../integration/executor/executor-process.js';
import { judgeCalls } from './call-verdict.js';
import { safetyCalls, streamCalls } from './call-stream.js';
import { chaosScale, scaledTimeout } from './chaos-scale.js';
import { complaints } from './log-tail.js';
import { labScene } from './network-lab.js';
import { effectCounts, SAFETY_TOOLS } from './safety-ledger.js';

/**
 * Zombie executors. Two executor children on two hosts (namespaces a and b) share the calls topic;
 * the one on host a is taken out of the group while it still runs calls, for longer than the
 * session timeout, so its partitions move to b; then it comes back:
 *
 * - link cut: host a's link to the broker goes down (its links to Redis, Postgres and the registry
 *   stay up, so it can finish what it runs and write its claims and effects), then up again;
 * - freeze: host a's executor is SIGSTOPped, then SIGCONTed — it resumes mid-call with every timer
 *   overdue, and with its claims' leases run out (the freeze outlasts them), so b may have taken
 *   its calls over.
 *
 * Calls cycle through the three retry-safety kinds (none, forwards-key, status-check). Checks: 0
 * duplicate effects, 0 lost calls, no answer or dead letter of one executor contradicting another's
 * (see call-verdict.ts), every UNRESOLVED with its case.
 */
const SCALE = chaosScale();
const CALLS = SCALE.networkCalls;
const KEYS = 24;
const SESSION_TIMEOUT_MS = 6_000;
const FAULT_MS = Math.max(SCALE.networkFaultMs, SESSION_TIMEOUT_MS + 4_000);

const scene = labScene('chaos_zombie', {
  executorEnv: {
    CHAOS_WORK_MS: '300',
    CHAOS_TOOL_TIMEOUT_MS: '2000',
    KAFKA_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
  },
  executors: 2,
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The child on host a (the first one spawned). */
function victim(): ExecutorProcess {
  const child = scene.lab.fleet.live.find((c) => scene.lab.hostOf(Number(c.name.split('-exec-')[1])) === 'a');
  if (child === undefined) throw new Error('no executor on host a');
  return child;
}

async function underFault(
  tag: string,
  fault: { readonly name: string; begin(): Promise<void>; end(): Promise<void> },
): Promise<void> {
  const calls = await safetyCalls(scene.lab, tag, CALLS, KEYS);
  const run = streamCalls(scene.lab, calls, scene.results, 8_000 + FAULT_MS);
  const zombie = victim();
  // The fault starts once calls are flowing on both executors.
  await run.answeredShare(0.15, 60_000);
  const t0 = Date.now();
  await fault.begin();
  await sleep(FAULT_MS);
  await fault.end();
  const faultMs = Date.now() - t0;
  const publishRetries = await run.published;
  const allMs = await run.allAnswered(scaledTimeout(90_000), () =>
    scene.lab.fleet.all.map((c) => complaints(c.name, c.output)).join('\n'),
  );
  // Late answers of the zombie arrive after it rejoined: give them a moment to show.
  await sleep(3_000);
  const counts = await effectCounts(scene.lab.pool);
  const verdict = judgeCalls(calls, scene.results.events, scene.dlq.events, counts);
  // The same verdict per retry-safety kind: which promise held, which did not.
  const byTool = Object.fromEntries(
    SAFETY_TOOLS.map((tool) => {
      const v = judgeCalls(
        calls.filter((c) => c.tool === tool),
        scene.results.events,
        scene.dlq.events,
        counts,
      );
      return [
        tool,
        { duplicateEffects: v.duplicateEffects.length, reruns: v.reruns, openCases: v.openCases },
      ];
    }),
  );
  const figures = {
    scale: SCALE.name,
    fault: fault.name,
    calls: CALLS,
    faultMs,
    faultWindow: `${new Date(t0).toISOString()}..${new Date(t0 + faultMs).toISOString()}`,
    zombiePid: zombie.pid,
    allAnsweredMs: allMs,
    publishRetries,
    zombie: zombie.name,
    zombieAnswers: verdict.answersByProducer[zombie.name] ?? 0,
    zombieStillRunning: zombie.child.exitCode === null && zombie.child.signalCode === null,
    answersByProducer: verdict.answersByProducer,
    answered: verdict.answered,
    lost: verdict.lost.length,
    duplicateEffects: verdict.duplicateEffects.length,
    contradictions: verdict.contradictions.length,
    unresolvedWithoutCase: verdict.unresolvedWithoutCase.length,
    unresolvedThenApplied: verdict.unresolvedThenApplied,
    reruns: verdict.reruns,
    extraAnswers: verdict.extraAnswers,
    openCases: verdict.openCases,
    outcomes: verdict.outcomes,
    byTool,
  };
  console.log(`[chaos zombie ${fault.name}] ${JSON.stringify(figures)}`);
  // Only answers that say what happened: applied, or unknown and reconciled.
  expect(
    Object.keys(verdict.outcomes).filter(
      (o) => !['SUCCESS', 'DUPLICATE', 'UNRESOLVED'].includes(o.split('/')[0]!),
    ),
  ).toEqual([]);
  expect(verdict.duplicateEffects).toEqual([]);
  expect(verdict.lost).toEqual([]);
  expect(verdict.contradictions).toEqual([]);
  expect(verdict.unresolvedWithoutCase).toEqual([]);
}

describe('zombie executor', () => {
  it(
    'cut from the broker mid-call (downstreams still reachable): its calls move, nothing doubles or contradicts',
    async () => {
      await underFault('cut', {
        name: 'link-cut',
        begin: () => scene.lab.net.cut('a', 'k'),
        end: () => scene.lab.net.heal('a', 'k'),
      });
    },
    scaledTimeout(150_000),
  );

  it(
    'frozen mid-call past its leases (SIGSTOP, SIGCONT): its calls move, nothing doubles or contradicts',
    async () => {
      const zombie = victim();
      await underFault('freeze', {
        name: 'sigstop',
        begin: async () => {
          zombie.child.kill('SIGSTOP');
        },
        end: async () => {
          zombie.child.kill('SIGCONT');
        },
      });
    },
    scaledTimeout(150_000),
  );

  it('both executors stop cleanly after the faults', async () => {
    const codes = await scene.lab.fleet.stop();
    expect(codes).toEqual([0, 0]);
  }, 60_000);
});

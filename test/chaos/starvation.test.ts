import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallRequestedEvent, ToolCallResultEvent } from '../../libs/events/contracts.js';
import { claimLeaseMs } from '../../libs/guards/idempotency.js';
import { OUTCOME_UNKNOWN_TEXT } from '../../services/mcp-gateway/call-result.js';
import { dieWithParent, startCpuHog, type LoadReading } from '../helpers/cpu-hog.js';
import { startPauser, type PauseReport } from '../helpers/process-pauser.js';
import { createExecutorStack, type ExecutorStack } from '../integration/executor/executor-stack.js';
import { connectModern } from '../integration/mcp/mcp-clients.js';
import {
  createSlowAnswerStack,
  SLOW_ANSWER_GATEWAY_WAIT_MS,
  type McpStack,
} from '../integration/mcp/mcp-stack.js';
import { judgeCalls } from './call-verdict.js';
import { chaosScale, scaledTimeout } from './chaos-scale.js';
import { createExecutorFleet, type ExecutorFleet } from './executor-fleet.js';
import { complaints } from './log-tail.js';
import { effectCounts, SAFETY_LEDGER_DDL, safetyLedgerTools } from './safety-ledger.js';
import {
  filingPlan,
  runStarvedFilings,
  startLegacyChild,
  type FilingFigures,
  type LegacyChild,
} from './starved-filing.js';
import { collectTopic, type TopicCollector } from './topic-collector.js';

/**
 * CPU starvation. Every scenario runs with a CPU hog on every core (two busy processes per core,
 * `test/helpers/cpu-hog.ts`), and most freeze a process outright on top of it (SIGSTOP/SIGCONT,
 * `test/helpers/process-pauser.ts`): the conditions under which a "not found" judged by the clock
 * of the wrong process lies. Each prints its figures, the load the hog produced included, as one
 * JSON line.
 */
const SCALE = chaosScale();

/** Runs `work` with the hog on; the hog's reading is returned beside the work's result. */
async function underHog<T>(work: () => Promise<T>): Promise<{ value: T; load: LoadReading }> {
  const hog = await startCpuHog();
  try {
    const value = await work();
    return { value, load: await hog.stop() };
  } finally {
    await hog.stop();
  }
}

/** The invariants every starved filing run keeps, and proof its faults happened. */
function expectFilingPromisesKept(figures: FilingFigures): void {
  expect(figures.violations.duplicateFilings).toEqual([]);
  expect(figures.violations.falseFailures).toEqual([]);
  expect(figures.violations.misnamed).toEqual([]);
  expect(figures.violations.unattributed).toEqual([]);
  expect(figures.violations.lateFilings).toEqual([]);
  expect(figures.violations.unresolvedMissettled).toEqual([]);
  // Only answers that say what happened: applied, unknown (to be reconciled), or an honest failure
  // (nothing of the call was filed) — counted above; here: every call was answered.
  expect(Object.values(figures.outcomes).reduce((a, b) => a + b, 0)).toBe(figures.calls);
  // The service really was frozen, and really confirmed stopped.
  expect(figures.pauses.stops).toBeGreaterThan(0);
  expect(figures.pauses.confirmedStopped).toBeGreaterThan(0);
  expect(figures.pauses.gone).toBe(false);
}

describe('legacy filing service frozen under a CPU hog, 30 % of answers lost after commit', () => {
  const TIMING = { lookupTimeoutMs: 4_000, submitTimeoutMs: 1_000, settleMarginMs: 250 };
  let svc: LegacyChild;
  beforeAll(async () => {
    svc = await startLegacyChild({
      name: 'chaos_starved_filing',
      faults: { dropAfterCommit: 0.3 },
      commitWindowMs: 1_000,
      seed: 4,
      timing: TIMING,
    });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it(
    'no return filed twice, no call reported failed whose filing exists, every applied answer names the filing',
    async () => {
      const plan = filingPlan(SCALE.starvedReturns, 'starved');
      // Stops longer than a submission's deadline plus the margin: requests sent just before or
      // during one wait in the service's socket buffer past their deadline.
      const { value: figures, load } = await underHog(() =>
        runStarvedFilings(svc, plan, {
          concurrency: 32,
          pause: {
            stops: 500,
            minStopMs: TIMING.submitTimeoutMs + TIMING.settleMarginMs + 250,
            maxStopMs: 3_000,
            minRunMs: 500,
            maxRunMs: 2_000,
            maxTotalMs: scaledTimeout(150_000),
          },
        }),
      );
      console.log(`[chaos starvation filing] ${JSON.stringify({ scale: SCALE.name, ...figures, load })}`);
      expectFilingPromisesKept(figures);
      // Answers were lost after the commit (the service's fault) and settled by the status check.
      expect(figures.sends.cutFiled).toBeGreaterThan(0);
      expect(figures.confirmedBy.status_check ?? 0).toBeGreaterThan(0);
      // Requests waited in the frozen service past their deadline and were not recorded.
      expect(figures.sends.timedOutUnfiled).toBeGreaterThan(0);
    },
    scaledTimeout(240_000),
  );
});

describe('legacy filing service frozen under a CPU hog, with mixed faults', () => {
  // As mixed-faults.test.ts: answers lost after the commit, connections cut before it, work so slow
  // it misses the deadline.
  const TIMING = { lookupTimeoutMs: 4_000, submitTimeoutMs: 300, settleMarginMs: 250 };
  let svc: LegacyChild;
  beforeAll(async () => {
    svc = await startLegacyChild({
      name: 'chaos_starved_mixed',
      faults: { dropAfterCommit: 0.15, dropBeforeCommit: 0.2, slow: 0.15 },
      slowMs: 450,
      commitWindowMs: 600,
      seed: 7,
      timing: TIMING,
    });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it(
    'the same promises hold on every path, and every path is taken',
    async () => {
      const plan = filingPlan(SCALE.starvedMixedReturns, 'mixed');
      const { value: figures, load } = await underHog(() =>
        runStarvedFilings(svc, plan, {
          concurrency: 24,
          pause: {
            stops: 500,
            minStopMs: TIMING.submitTimeoutMs + TIMING.settleMarginMs + 250,
            maxStopMs: 2_500,
            minRunMs: 500,
            maxRunMs: 2_000,
            maxTotalMs: scaledTimeout(150_000),
          },
        }),
      );
      console.log(`[chaos starvation mixed] ${JSON.stringify({ scale: SCALE.name, ...figures, load })}`);
      expectFilingPromisesKept(figures);
      expect(figures.sends.cutFiled).toBeGreaterThan(0);
      expect(figures.sends.cutUnfiled).toBeGreaterThan(0);
      expect(figures.sends.timedOutUnfiled).toBeGreaterThan(0);
      expect(figures.confirmedBy.status_check ?? 0).toBeGreaterThan(0);
      expect(figures.confirmedBy.resubmission ?? 0).toBeGreaterThan(0);
    },
    scaledTimeout(240_000),
  );
});

describe('an MCP call answered "outcome unknown" under a CPU hog', () => {
  /** The gateway waits 300 ms; the tool applies, then hangs 5 s (as in mcp-outcome-unknown.test.ts). */
  const GATEWAY_WAIT_MS = SLOW_ANSWER_GATEWAY_WAIT_MS;
  let stack: McpStack;
  let token: string;
  beforeAll(async () => {
    ({ stack, token } = await createSlowAnswerStack('chaos_starved_mcp'));
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  it(
    'is never answered failed; its later resolution is SUCCESS, with exactly one effect per call',
    async () => {
      const tag = Date.now();
      const orders = Array.from({ length: SCALE.starvedMcpCalls }, (_, i) => `O-starved-${tag}-${i}`);
      const effectsBefore = stack.effects.of('book_shipment');
      const client = await connectModern(stack.url, token);
      try {
        const { value: runs, load } = await underHog(async () =>
          Promise.all(
            orders.map(async (orderId) => {
              const args = { order_id: orderId, hang_ms: 5_000 };
              const startedAt = Date.now();
              const first = await client.callTool('book_shipment', args);
              const firstMs = Date.now() - startedAt;
              const [published] = await stack.waitFor('calls', (c) => orderOf(c) === orderId);
              const resolved = await stack.waitFor(
                'results',
                (r) => r.callId === published!.callId && r.outcome !== 'UNRESOLVED',
              );
              // When the executor started on it (its audit record), measured from the publish.
              const [audited] = await stack.waitFor(
                'audit',
                (a) => a.callId === published!.callId && a.source === 'executor',
              );
              // The same call again: answered from the idempotency record, never run again. Under the
              // hog its answer too may come after the gateway stopped waiting ("outcome unknown");
              // its resolution on the results topic says what it was.
              const again = await client.callTool('book_shipment', args);
              const published2 = await stack.waitFor('calls', (c) => orderOf(c) === orderId, 2);
              const repeat = published2.find((c) => c.callId !== published!.callId)!;
              const [againResolved] = await stack.waitFor(
                'results',
                (r) => r.callId === repeat.callId && r.outcome !== 'UNRESOLVED',
              );
              return {
                orderId,
                first,
                firstMs,
                published: published!,
                resolved,
                audited: audited!,
                again,
                againResolved: againResolved!,
              };
            }),
          ),
        );
        // Everything the results topic holds for these calls, UNRESOLVED answers included.
        const results: ToolCallResultEvent[] = await stack.waitFor('results', () => true);
        const figures = {
          scale: SCALE.name,
          calls: runs.length,
          firstAnswers: tally(runs.map((r) => outcomeOf(r.first))),
          firstAnswerMs: runs.map((r) => r.firstMs),
          callDeadlineAfterPublishMs: runs.map((r) =>
            r.published.deadlineMs === null ? null : r.published.deadlineMs - r.published.requestedAtMs,
          ),
          resultsPerCall: runs.map((r) =>
            results
              .filter((e) => e.callId === r.published.callId)
              .map((e) => `${e.outcome}${e.error ? `/${e.error.code}` : ''} by ${e.source}`)
              .join(', '),
          ),
          executorStartedAfterMs: runs.map((r) => r.audited.startedAtMs - r.published.requestedAtMs),
          startedAfterTheGatewayStoppedWaiting: runs.filter(
            (r) => r.audited.startedAtMs - r.published.requestedAtMs > GATEWAY_WAIT_MS,
          ).length,
          resolvedAfterMs: runs.map((r) => r.resolved[0]!.completedAtMs - r.published.requestedAtMs),
          again: tally(runs.map((r) => outcomeOf(r.again))),
          againResolved: tally(runs.map((r) => r.againResolved.outcome)),
          // A repeat not answered from the idempotency record: every answer and audit record of both.
          repeatsNotDuplicate: await Promise.all(
            runs
              .filter((r) => r.againResolved.outcome !== 'DUPLICATE')
              .map(async (r) => ({
                order: r.orderId,
                key: r.againResolved.idempotencyKey,
                firstKey: r.resolved[0]!.idempotencyKey,
                answers: results
                  .filter((e) => e.callId === r.againResolved.callId || e.callId === r.published.callId)
                  .map(
                    (e) =>
                      `${e.callId === r.published.callId ? 'first' : 'repeat'} ${e.outcome} by ${e.producerId} at ${e.completedAtMs}`,
                  ),
                audit: (
                  await stack.waitFor(
                    'audit',
                    (a) => a.callId === r.againResolved.callId || a.callId === r.published.callId,
                  )
                ).map((a) => ({
                  call: a.callId === r.published.callId ? 'first' : 'repeat',
                  outcome: a.outcome,
                  source: a.source,
                  startedAtMs: a.startedAtMs,
                  finishedAtMs: a.finishedAtMs,
                  decisions: a.decisions.map(
                    (d) => `${d.stage}:${d.decision}${d.reason ? ` (${d.reason})` : ''}`,
                  ),
                })),
              })),
          ),
          effects: stack.effects.of('book_shipment') - effectsBefore,
          load,
        };
        console.log(`[chaos starvation mcp] ${JSON.stringify(figures)}`);
        for (const r of runs) {
          // "Outcome unknown — do not retry", or the result itself; never a failure.
          expect(['UNRESOLVED', 'SUCCESS']).toContain(outcomeOf(r.first));
          if (r.first.isError === true) expect(r.first.content[0]!.text).toContain(OUTCOME_UNKNOWN_TEXT);
          const all = results.filter((e) => e.callId === r.published.callId);
          expect(all.filter((e) => e.outcome !== 'UNRESOLVED').map((e) => e.outcome)).toEqual(['SUCCESS']);
          expect(all.map((e) => e.outcome).filter((o) => o !== 'SUCCESS' && o !== 'UNRESOLVED')).toEqual([]);
          expect(['UNRESOLVED', 'DUPLICATE']).toContain(outcomeOf(r.again));
          if (outcomeOf(r.again) === 'DUPLICATE')
            expect(r.again.structuredContent).toEqual({ booking_id: `B-${r.orderId}` });
          expect(r.againResolved.outcome).toBe('DUPLICATE');
          expect(JSON.parse(r.againResolved.payloadJson ?? 'null')).toEqual({ booking_id: `B-${r.orderId}` });
        }
        expect(figures.effects).toBe(orders.length);
      } finally {
        await client.close();
      }
    },
    scaledTimeout(120_000),
  );
});

describe('an executor frozen past its lease mid-call; the status-check tool never calls assertLive()', () => {
  const WORK_MS = 4_000;
  const TOOL_TIMEOUT_MS = 4_500;
  const LEASE_MARGIN_MS = 1_000;
  const SAFETY_CATALOG = fileURLToPath(new URL('./safety-catalog.ts', import.meta.url));
  // The lease the executors give an append_checked call, as the product computes it.
  const appendChecked = safetyLedgerTools({} as never, { workMs: WORK_MS, timeoutMs: TOOL_TIMEOUT_MS }).find(
    (t) => t.name === 'append_checked',
  )!;
  const LEASE_MS = claimLeaseMs(appendChecked, { resultTtlMs: 600_000, leaseMarginMs: LEASE_MARGIN_MS });
  const FREEZE_MS = LEASE_MS + 5_000;

  let stack: ExecutorStack;
  let fleet: ExecutorFleet;
  let results: TopicCollector<'results'>;
  let dlq: TopicCollector<'dlq'>;
  let audit: TopicCollector<'audit'>;
  beforeAll(async () => {
    stack = await createExecutorStack('chaos_frozen');
    await stack.db.pool.query(SAFETY_LEDGER_DDL);
    fleet = createExecutorFleet(
      stack,
      {
        TOOLGATE_CATALOG_MODULE: SAFETY_CATALOG,
        CHAOS_WORK_MS: String(WORK_MS),
        CHAOS_TOOL_TIMEOUT_MS: String(TOOL_TIMEOUT_MS),
        LEASE_MARGIN_MS: String(LEASE_MARGIN_MS),
      },
      { launcher: () => dieWithParent() },
    );
    results = await collectTopic(stack, 'results');
    dlq = await collectTopic(stack, 'dlq');
    audit = await collectTopic(stack, 'audit');
    await Promise.all([fleet.spawn(), fleet.spawn()]);
  }, 180_000);
  afterAll(async () => {
    fleet?.destroy();
    await results?.stop().catch(() => undefined);
    await dlq?.stop().catch(() => undefined);
    await audit?.stop().catch(() => undefined);
    await stack?.close();
  });

  it(
    'the other executor takes its calls over; each call has exactly one effect and no answers contradict',
    async () => {
      const template = await stack.request({ key: 'k0', seq: 0, ref: 'template' });
      const calls: ToolCallRequestedEvent[] = [];
      for (let i = 0; i < SCALE.frozenExecutorCalls; i++) {
        const callId = `${stack.prefix}-frozen${i}`;
        calls.push(
          await stack.request(
            { key: `fk${i}`, seq: i, ref: callId },
            {
              callId,
              index: i,
              tool: 'append_checked',
              principalAssertion: template.principalAssertion,
              traceId: template.traceId,
            },
          ),
        );
      }
      const ids = new Set(calls.map((c) => c.callId));
      const names = new Set(fleet.live.map((c) => c.name));
      const { value: run, load } = await underHog(async () => {
        // Calls go out 200 ms apart, so the frozen executor holds them at different points.
        const publishing = (async () => {
          for (const c of calls) {
            await stack.publishCalls([c]);
            await sleep(200);
          }
        })();
        // The first executor seen holding a call is frozen about a second into it.
        const first = await inFlight(stack, names, 60_000);
        await sleep(Math.max(0, first.seenAt + 1_000 - Date.now()));
        const victim = fleet.live.find((c) => c.name === first.owner)!;
        const pauser = startPauser(victim.pid, {
          stops: 1,
          minStopMs: FREEZE_MS,
          maxStopMs: FREEZE_MS,
          minRunMs: 0,
          maxRunMs: 0,
          maxTotalMs: FREEZE_MS + 10_000,
        });
        let held: string[];
        let pause: PauseReport;
        try {
          // The calls it holds, read once it is stopped (it can claim nothing more).
          await sleep(100);
          held = (await claims(stack)).filter((c) => c.owner === victim.name).map((c) => c.key);
          await publishing;
          pause = await pauser.done;
        } finally {
          await pauser.stop();
        }
        await results.until(
          () =>
            new Set(results.events.filter((r) => ids.has(r.callId)).map((r) => r.callId)).size >= ids.size,
          scaledTimeout(120_000),
          () => `every call answered\n${fleet.all.map((c) => complaints(c.name, c.output)).join('\n')}`,
        );
        // The resumed executor answers what it was running once its overdue timers fired: wait
        // until the results topic has been quiet for 5 s.
        await quiet(results, 5_000, 60_000);
        return { victim, held, pause };
      });
      const counts = await effectCounts(stack.db.pool);
      const verdict = judgeCalls(calls, results.events, dlq.events, counts);
      const mine = results.events.filter((r) => ids.has(r.callId));
      const heldCalls = new Set(
        mine.filter((r) => run.held.includes(r.idempotencyKey ?? '')).map((r) => r.callId),
      );
      const takenOver = [...heldCalls].filter((id) =>
        mine.some((r) => r.callId === id && r.producerId !== run.victim.name),
      );
      const { rows: byPid } = await stack.db.pool.query<{ pid: number; n: number }>(
        'SELECT pid, count(*)::int AS n FROM effects GROUP BY pid',
      );
      const figures = {
        scale: SCALE.name,
        calls: calls.length,
        leaseMs: LEASE_MS,
        freeze: { ...run.pause, log: undefined },
        victim: run.victim.name,
        heldAtFreeze: run.held.length,
        heldCallsAnswered: heldCalls.size,
        heldTakenOver: takenOver.length,
        effectsByExecutor: Object.fromEntries(
          byPid.map((r) => [r.pid === run.victim.pid ? 'frozen' : 'other', r.n]),
        ),
        effectsPerCall: tally(calls.map((c) => String(counts.effects.get(c.callId) ?? 0))),
        answersByProducer: verdict.answersByProducer,
        outcomes: verdict.outcomes,
        lost: verdict.lost.length,
        duplicateEffects: verdict.duplicateEffects,
        contradictions: verdict.contradictions,
        unresolvedWithoutCase: verdict.unresolvedWithoutCase.length,
        unresolvedThenApplied: verdict.unresolvedThenApplied,
        openCases: verdict.openCases,
        // Why each UNRESOLVED answer was given: the executor and its execute stage's reason.
        unresolvedBecause: tally(
          audit.events
            .filter((a) => ids.has(a.callId) && a.outcome === 'UNRESOLVED')
            .map(
              (a) =>
                `${a.producerId === run.victim.name ? 'frozen' : 'other'}: ${
                  a.decisions.find((d) => d.reason !== null && d.decision !== 'pass')?.reason ??
                  a.decisions.at(-1)?.reason ??
                  '?'
                }`,
            ),
        ),
        reruns: verdict.reruns,
        load,
      };
      console.log(`[chaos starvation frozen-executor] ${JSON.stringify(figures)}`);
      for (const c of calls) expect(counts.effects.get(c.callId) ?? 0, c.callId).toBe(1);
      expect(verdict.duplicateEffects).toEqual([]);
      expect(verdict.contradictions).toEqual([]);
      expect(verdict.lost).toEqual([]);
      expect(verdict.unresolvedWithoutCase).toEqual([]);
      // The fault happened as meant: one freeze, seen by /proc, longer than the lease, of an
      // executor holding calls, which the other executor took over.
      expect(run.pause.confirmedStopped).toBe(1);
      expect(run.pause.longestStopMs).toBeGreaterThan(LEASE_MS);
      expect(run.held.length).toBeGreaterThan(0);
      expect(takenOver.length).toBeGreaterThan(0);
    },
    scaledTimeout(240_000),
  );
});

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function tally(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** The order a published book_shipment call is for (ids are prefixes of one another: -1, -10). */
function orderOf(call: ToolCallRequestedEvent): string | undefined {
  return (JSON.parse(call.argumentsJson) as { order_id?: string }).order_id;
}

function outcomeOf(answer: { readonly _meta?: Record<string, unknown> }): string {
  return (answer._meta?.['io.toolgate/result'] as { outcome?: string } | undefined)?.outcome ?? '?';
}

interface Claim {
  readonly key: string;
  readonly owner: string;
}

/** The in-flight idempotency claims of the stack's executors (key without the store's prefix). */
async function claims(stack: ExecutorStack): Promise<Claim[]> {
  const prefix = `${stack.redis.prefix}idem:`;
  const found: Claim[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await stack.redis.redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const [state, owner] = await stack.redis.redis.hmget(key, 'state', 'owner');
      if (state === 'in-flight' && typeof owner === 'string')
        found.push({ key: key.slice(prefix.length), owner });
    }
  } while (cursor !== '0');
  return found;
}

/** Waits for the first in-flight claim by one of `owners`. */
async function inFlight(
  stack: ExecutorStack,
  owners: ReadonlySet<string>,
  timeoutMs: number,
): Promise<Claim & { readonly seenAt: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const claim = (await claims(stack)).find((c) => owners.has(c.owner));
    if (claim !== undefined) return { ...claim, seenAt: Date.now() };
    if (Date.now() > deadline) throw new Error(`no executor claimed a call within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Resolves once `collector` received nothing new for `quietMs` (at most `maxMs`). */
async function quiet(collector: TopicCollector<'results'>, quietMs: number, maxMs: number): Promise<void> {
  const until = Date.now() + maxMs;
  let seen = collector.events.length;
  let since = Date.now();
  while (Date.now() < until && Date.now() - since < quietMs) {
    await sleep(250);
    if (collector.events.length !== seen) {
      seen = collector.events.length;
      since = Date.now();
    }
  }
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import { createExecutorStack, type ExecutorStack } from '../integration/executor/executor-stack.js';
import { ledgerRows } from '../integration/executor/ledger-tools.js';
import { chaosScale, scaledTimeout } from './chaos-scale.js';
import { createExecutorFleet, type ExecutorFleet } from './executor-fleet.js';
import { losesResponse } from './lossy-ledger.js';
import { complaints } from './log-tail.js';
import { collectTopic } from './topic-collector.js';

/**
 * Scenario 1, crash chaos. N calls over many keys, 20% of them published a second time (a replayed
 * event: same call id, same idempotency key), executor children SIGKILLed on a period and
 * restarted, and 0.4% of downstream responses lost after the ledger row was written.
 *
 * What counts:
 * - effects: rows in the Postgres ledger the tool writes (one per invocation, nothing dedupes);
 * - terminal results: result events by call id; an UNRESOLVED call must have its UNRESOLVED dead
 *   letter — the reconciler's input, so it is counted as an open reconciliation case (the reconciler
 *   itself is not run here: its own suite covers case handling);
 * - attempts: an attempt is one executor handling that produced an audit record. Every delivery
 *   (first, replayed, or redelivered after a kill) that reached the pipeline is one; a child killed
 *   after the tool's effect but before its audit publish leaves no record for that handling, and the
 *   redelivery that follows is audited as its own attempt (typically DUPLICATE or UNRESOLVED). So:
 *   audit records have unique record ids, cover every published delivery, and at most one per call
 *   says SUCCESS.
 */
const SCALE = chaosScale();
const CALLS = SCALE.crashCalls;
const KEYS = SCALE.crashKeys;
const REPLAY_SHARE = 0.2;
const LOSE_PER_MILLE = 4;

let stack: ExecutorStack;
let fleet: ExecutorFleet;

beforeAll(async () => {
  stack = await createExecutorStack('chaos_crash');
  fleet = createExecutorFleet(stack, {
    CHAOS_WORK_MS: '5',
    CHAOS_LOSE_PER_MILLE: String(LOSE_PER_MILLE),
  });
});

afterAll(async () => {
  fleet.destroy();
  await stack.close();
});

describe('crash chaos', () => {
  it(
    'no effect twice, every call answered or an open case, per-key order, one audit record per attempt',
    async () => {
      const t0 = Date.now();
      const results = await collectTopic(stack, 'results');
      const audit = await collectTopic(stack, 'audit');
      const dlq = await collectTopic(stack, 'dlq');
      await Promise.all(Array.from({ length: SCALE.executors }, () => fleet.spawn()));

      const template = await stack.request({ key: 'k0', seq: 0, ref: 'template' });
      const originals: ToolCallRequestedEvent[] = [];
      for (let i = 0; i < CALLS; i++) {
        const key = `k${i % KEYS}`;
        const seq = Math.floor(i / KEYS);
        const callId = `${stack.prefix}-c${i}`;
        originals.push(
          await stack.request(
            { key, seq, ref: callId },
            { callId, index: i, principalAssertion: template.principalAssertion, traceId: template.traceId },
          ),
        );
      }
      // Replays land a little after their original, so some meet it in flight and some after it.
      const stream: ToolCallRequestedEvent[] = [];
      const pendingReplays: Array<{ at: number; event: ToolCallRequestedEvent }> = [];
      originals.forEach((event, i) => {
        stream.push(event);
        if (Math.random() < REPLAY_SHARE)
          pendingReplays.push({ at: i + 1 + Math.floor(Math.random() * 40), event });
        for (const r of pendingReplays.filter((p) => p.at <= i)) {
          stream.push(r.event);
          pendingReplays.splice(pendingReplays.indexOf(r), 1);
        }
      });
      for (const r of pendingReplays) stream.push(r.event);
      const deliveriesPublished = new Map<string, number>();
      for (const e of stream) deliveriesPublished.set(e.callId, (deliveriesPublished.get(e.callId) ?? 0) + 1);
      const replays = stream.length - originals.length;

      const answered = (): number => new Set(results.events.map((e) => e.callId)).size;
      let kills = 0;
      let done = false;
      let firstKill!: () => void;
      const killed = new Promise<void>((r) => (firstKill = r));

      // The second half of the stream is held back until the first executor has been killed, so a
      // fast machine cannot finish the run before any crash happens: every run crosses a kill.
      let publishedSoFar = 0;
      const half = Math.ceil(stream.length / 2 / 50) * 50;
      const publishing = (async () => {
        for (let i = 0; i < stream.length; i += 50) {
          if (i === half) await killed;
          await stack.publishCalls(stream.slice(i, i + 50));
          publishedSoFar = Math.min(stream.length, i + 50);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();

      const spawns: Promise<unknown>[] = [];
      // The first kill comes once calls are flowing (a fifth of the first half answered); then one
      // every period, whether or not the last replacement finished starting: the group is often
      // mid-rebalance when the next one dies. A kill also waits for some calls answered since the
      // previous one: on a loaded machine a rebalance can outlast the period, and killing on the
      // clock alone would then keep the group rebalancing for ever (a crash every few seconds,
      // indefinitely, is a test of patience, not of the executor's guarantees).
      const progressPerKill = Math.ceil(CALLS / 100);
      let answeredAtKill = 0;
      const chaos = (async () => {
        let nextKillAt = 0;
        while (!done) {
          await new Promise((r) => setTimeout(r, 100));
          if (done) break;
          const due =
            kills === 0
              ? answered() >= Math.ceil(half / 10)
              : Date.now() >= nextKillAt && answered() - answeredAtKill >= progressPerKill;
          // Keep one started executor alive, and never more than the fleet's size starting at once.
          if (!due || fleet.started() < 2 || fleet.live.length < SCALE.executors) continue;
          await fleet.killOne();
          kills += 1;
          answeredAtKill = answered();
          firstKill();
          nextKillAt = Date.now() + SCALE.killEveryMs;
          spawns.push(fleet.spawn());
        }
      })();

      try {
        await results.until(
          () => answered() >= CALLS,
          scaledTimeout(240_000),
          () =>
            [
              `every call answered: ${answered()}/${CALLS}, published ${publishedSoFar}/${stream.length}`,
              `kills ${kills}, executors started ${fleet.all.length}, live ${fleet.live.length} (${fleet.started()} ready)`,
              ...fleet.live.map((c) => complaints(c.name, c.output)),
            ].join('\n'),
        );
        await publishing;
        await audit.until(
          () => audit.events.length >= stream.length,
          60_000,
          () => `an audit record per published delivery: ${audit.events.length}/${stream.length}`,
        );
      } finally {
        done = true;
        await chaos;
        await Promise.all(spawns);
      }
      const exitCodes = await fleet.stop();
      const elapsedMs = Date.now() - t0;
      await results.stop();
      await audit.stop();
      await dlq.stop();

      const rows = await ledgerRows(stack.db.pool);
      const rowsByCall = new Map<string, number>();
      for (const row of rows) rowsByCall.set(row.callRef, (rowsByCall.get(row.callRef) ?? 0) + 1);
      const outcomes = new Map<string, string[]>();
      for (const e of results.events) outcomes.set(e.callId, [...(outcomes.get(e.callId) ?? []), e.outcome]);
      const openCases = new Set(dlq.events.filter((d) => d.reason === 'UNRESOLVED').map((d) => d.callId));
      const doubleEffects = [...rowsByCall.values()].filter((n) => n > 1).length;
      const unresolved = [...outcomes].filter(([, o]) => o.includes('UNRESOLVED')).map(([id]) => id);
      const lostPlanned = originals.filter((o) => losesResponse(o.callId, LOSE_PER_MILLE)).length;
      const auditByCall = new Map<string, string[]>();
      for (const a of audit.events)
        auditByCall.set(a.callId, [...(auditByCall.get(a.callId) ?? []), a.outcome]);
      const recordIds = new Set(audit.events.map((a) => a.recordId));
      const rowsByKilled = rows.filter((r) => fleet.killedPids.has(r.pid)).length;
      const figures = {
        scale: SCALE.name,
        calls: CALLS,
        keys: KEYS,
        replays,
        deliveriesPublished: stream.length,
        executorsStarted: fleet.all.length,
        kills,
        lostResponsesPlanned: lostPlanned,
        ledgerRows: rows.length,
        rowsByKilledChildren: rowsByKilled,
        doubleEffects,
        answered: outcomes.size,
        resultsDelivered: results.events.length,
        unresolved: unresolved.length,
        openCases: openCases.size,
        auditRecords: audit.events.length,
        attemptsBeyondPublished: audit.events.length - stream.length,
        undecodable: results.undecodable + audit.undecodable + dlq.undecodable,
        elapsedMs,
      };
      console.log(`[chaos crash] ${JSON.stringify(figures)}`);

      expect(kills).toBeGreaterThanOrEqual(1);
      expect(exitCodes.every((c) => c === 0)).toBe(true);
      expect(figures.undecodable).toBe(0);
      // 0 duplicate effects.
      expect(doubleEffects).toBe(0);
      // Every call: exactly one terminal answer after dedupe by call id, consistent with the ledger,
      // or an open case.
      expect(outcomes.size).toBe(CALLS);
      for (const o of originals) {
        const seen = new Set(outcomes.get(o.callId));
        const ran = rowsByCall.get(o.callId) ?? 0;
        if (seen.has('UNRESOLVED')) {
          // One answer after dedupe: "unknown" and "done" never both, whichever delivery said which.
          expect(
            [...seen].filter((s) => s !== 'UNRESOLVED' && s !== 'DUPLICATE'),
            o.callId,
          ).toEqual([]);
          expect(openCases.has(o.callId), `${o.callId} UNRESOLVED without a case`).toBe(true);
          expect(ran, o.callId).toBeLessThanOrEqual(1);
        } else {
          expect(
            [...seen].every((s) => s === 'SUCCESS' || s === 'DUPLICATE'),
            `${o.callId}: ${[...seen].join()}`,
          ).toBe(true);
          expect(ran, o.callId).toBe(1);
        }
        // A lost response is never reported as a success of the first attempt.
        if (losesResponse(o.callId, LOSE_PER_MILLE)) expect(seen.has('SUCCESS'), o.callId).toBe(false);
      }
      // Per key, effects in publish order.
      for (let k = 0; k < KEYS; k++) {
        const key = `k${k}`;
        const order = rows.filter((r) => r.key === key).map((r) => r.seq);
        const sorted = [...order].sort((a, b) => a - b);
        expect(order, key).toEqual(sorted);
      }
      // Audit: one record per attempt (unique ids), every published delivery audited, one SUCCESS at most.
      expect(recordIds.size).toBe(audit.events.length);
      for (const [callId, published] of deliveriesPublished) {
        const records = auditByCall.get(callId) ?? [];
        expect(records.length, callId).toBeGreaterThanOrEqual(published);
        expect(records.filter((r) => r === 'SUCCESS').length, callId).toBeLessThanOrEqual(1);
      }
    },
    scaledTimeout(300_000),
  );
});

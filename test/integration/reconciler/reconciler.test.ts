import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresCaseStore } from '../../../libs/adapters/postgres/case-store.js';
import { argumentsFingerprint, idempotencyKey } from '../../../libs/core/idempotency-key.js';
import type { DeadLetterEvent } from '../../../libs/events/contracts.js';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import type { IdempotencyStore, StoredResult } from '../../../libs/ports/idempotency-store.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { createOperations, type Operations } from '../../../libs/reconcile/operations.js';
import { createReconciler, type Reconciler } from '../../../services/reconciler/reconciler.js';
import { uniqueName } from '../../helpers/names.js';
import type { TestSchema } from '../../helpers/postgres.js';
import { eventually, type EventStack } from '../audit-sink/event-stack.js';
import { FILINGS_DDL, filingTool, insertFiling } from './filings.js';
import { openReconcilerServers, reconcilerDeps, type ReconcilerServers } from './reconciler-parts.js';

const TENANT = 't1';
const REPLY_PARTITION = 2;
const UNRESOLVED: StoredResult = {
  outcome: 'UNRESOLVED',
  result: { code: 'UNRESOLVED', message: 'outcome unknown' },
  completedAtMs: Date.now(),
};

describe('reconciler on Kafka, Postgres and Redis', () => {
  let servers: ReconcilerServers;
  let stack: EventStack;
  let db: TestSchema;
  let idempotency: IdempotencyStore;
  let cases: PostgresCaseStore;
  let reconciler: Reconciler;
  let ops: Operations;
  let seq = 0;

  beforeAll(async () => {
    servers = await openReconcilerServers('reconciler');
    ({ stack, db, idempotency, cases } = servers);
    await db.pool.query(FILINGS_DDL);
    const registry = new ToolRegistry();
    registry.register(filingTool(db.pool));
    const deps = {
      ...reconcilerDeps(stack, { cases, idempotency, tools: registry }),
      reconcilerId: 'reconciler-it',
      groupId: uniqueName('reconcilers'),
    };
    reconciler = createReconciler({ ...deps, checkScheduleMs: [200, 400, 800], pollIntervalMs: 50 });
    ops = createOperations(deps);
    await reconciler.start();
  });

  afterAll(async () => {
    await reconciler.stop();
    await servers.close();
  });

  /** A timed-out call as the executor leaves it: UNRESOLVED in the idempotency store, and its dead letter. */
  async function timedOutCall(): Promise<{
    letter: DeadLetterEvent;
    key: string;
    args: Record<string, unknown>;
  }> {
    seq += 1;
    const args = { taxpayerId: `TP-${seq}`, year: 2024 };
    const ctx = { tenant: TENANT, taskId: `${stack.prefix}-task`, step: 1, index: seq };
    const key = idempotencyKey(ctx, 'submit_filing', args);
    const callId = `${stack.prefix}-call-${seq}`;
    const claim = await idempotency.claim(key, argumentsFingerprint(args), 'executor-1', 60_000);
    expect(claim.kind).toBe('claimed');
    expect(await idempotency.complete(key, 'executor-1', UNRESOLVED, 600_000)).toBe(true);
    const request = {
      callId,
      providerCallId: `toolu_${seq}`,
      tool: 'submit_filing',
      toolVersion: null,
      tenant: TENANT,
      taskId: ctx.taskId,
      step: ctx.step,
      index: ctx.index,
      idempotencyKey: key,
      resourceKey: `${TENANT}:filing:${args.taxpayerId}`,
      principalId: 'agent-7',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      replyTopic: stack.topics.results,
      replyPartition: REPLY_PARTITION,
      deadlineMs: null,
      requestedAtMs: Date.now() - 3_000,
      arguments: args,
    };
    const letter: DeadLetterEvent = {
      deadLetterId: `UNRESOLVED:${callId}`,
      reason: 'UNRESOLVED',
      callId,
      tenant: TENANT,
      tool: 'submit_filing',
      idempotencyKey: key,
      resourceKey: request.resourceKey,
      principalId: 'agent-7',
      traceId: request.traceId,
      requestJson: JSON.stringify(request),
      errorCode: 'UNRESOLVED',
      errorMessage: 'The call timed out; its outcome is unknown.',
      attemptsJson: JSON.stringify([
        { attempt: 1, startedAtMs: Date.now() - 2_500, durationMs: 2_000, result: 'TIMEOUT' },
      ]),
      lastKnownStateJson: JSON.stringify({ outcome: 'UNRESOLVED', toolVersion: '1.0.0', toolInvocations: 1 }),
      originalTopic: stack.topics.calls,
      originalPartition: 0,
      originalOffset: String(seq),
      originalKey: request.resourceKey,
      rawPayloadBase64: null,
      producerId: 'executor-1',
      createdAtMs: Date.now(),
    };
    return { letter, key, args };
  }

  async function publishLetter(letter: DeadLetterEvent): Promise<void> {
    await stack.publish('dlq', [{ key: letter.resourceKey!, event: letter }]);
  }

  async function caseIn(callId: string, state: ReconciliationCase['state']): Promise<ReconciliationCase> {
    return eventually(`case of ${callId} ${state}`, async () => {
      const c = await cases.get({ callId });
      return c?.state === state ? c : undefined;
    });
  }

  /** Among the first `count` result events, the one answering `callId` (waited for). */
  async function resultFor(callId: string | null, count: number, what: string) {
    return eventually(what, async () => {
      const read = await stack.read('results', count);
      return read.find((r) => r.event.callId === callId);
    });
  }

  /** What the idempotency store answers another executor claiming `key` for `args` now. */
  function claimAgain(key: string, args: Record<string, unknown>) {
    return idempotency.claim(key, argumentsFingerprint(args), 'executor-2', 60_000);
  }

  it('applied: the case in Postgres resolves, the result topic gets the resolution, Redis answers the settled result', async () => {
    const { letter, key, args } = await timedOutCall();
    await insertFiling(db.pool, key, 'accepted', String(args.taxpayerId));
    await publishLetter(letter);
    await publishLetter(letter); // a redelivered dead letter keeps one case

    const c = await caseIn(letter.callId!, 'resolved_succeeded');
    expect(c.statusChecks).toHaveLength(1);
    expect((await cases.list({})).filter((x) => x.callId === letter.callId)).toHaveLength(1);

    const expected = { confirmation: `CNF-${key.slice(-6)}`, status: 'accepted' };
    const results = await stack.read('results', 1);
    expect(results[0]!.partition).toBe(REPLY_PARTITION);
    expect(results[0]!.event).toMatchObject({
      callId: letter.callId,
      outcome: 'SUCCESS',
      source: 'reconciler',
      idempotencyKey: key,
    });
    expect(JSON.parse(results[0]!.event.payloadJson!)).toEqual(expected);

    const audits = await stack.read('audit', 1);
    expect(audits[0]!.event).toMatchObject({
      callId: letter.callId,
      source: 'reconciler',
      outcome: 'SUCCESS',
    });
    expect(JSON.parse(audits[0]!.event.argumentsJson)).toEqual({ taxpayerId: '[redacted]', year: 2024 });

    // A duplicate of the call is now answered with the settled outcome, not "unknown".
    const again = await claimAgain(key, args);
    expect(again).toMatchObject({ kind: 'completed', stored: { outcome: 'SUCCESS', result: expected } });
  });

  it('not-applied: resolved_failed and a retryable EXECUTION_ERROR, settled in Redis', async () => {
    const { letter, key, args } = await timedOutCall();
    await publishLetter(letter);
    await caseIn(letter.callId!, 'resolved_failed');
    const results = await resultFor(letter.callId, 2, 'the failure result');
    expect(results.event).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      source: 'reconciler',
      error: { code: 'TIMEOUT', retryable: true },
    });
    expect(await claimAgain(key, args)).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'EXECUTION_ERROR', result: { code: 'TIMEOUT' } },
    });
  });

  it('unknown through the schedule: needs_manual in Postgres; a person then resolves it, as the operator', async () => {
    const { letter, key, args } = await timedOutCall();
    await insertFiling(db.pool, key, 'pending', String(args.taxpayerId));
    await publishLetter(letter);
    const c = await caseIn(letter.callId!, 'needs_manual');
    expect(c.statusChecks.map((s) => s.answer.state)).toEqual(['unknown', 'unknown', 'unknown']);
    const gaps = c.statusChecks.slice(1).map((s, i) => s.atMs - c.statusChecks[i]!.atMs);
    expect(gaps.every((gap, i) => gap >= [400, 800][i]!)).toBe(true);
    expect(c.history.at(-1)!.note).toContain(`idempotency key ${key}`);
    expect(await claimAgain(key, args)).toEqual({
      kind: 'completed',
      stored: UNRESOLVED,
    });

    const resolved = await ops.resolveByHand(c.caseId, {
      outcome: 'succeeded',
      by: 'ann',
      note: 'The clerk confirmed the filing by phone.',
      result: { confirmation: 'CNF-PHONE', status: 'accepted', clerk_note: 'do not show' },
    });
    expect(resolved).toMatchObject({ ok: true, delivery: { settled: true, audited: true, answered: true } });
    expect((await cases.get(c.caseId))!).toMatchObject({
      state: 'resolved_succeeded',
      resolution: { by: 'operator:ann', note: 'The clerk confirmed the filing by phone.' },
    });
    const answer = await resultFor(letter.callId, 3, 'the operator result');
    expect(answer.event).toMatchObject({
      source: 'operator',
      producerId: 'operator:ann',
      outcome: 'SUCCESS',
    });
    expect(JSON.parse(answer.event.payloadJson!)).toEqual({ confirmation: 'CNF-PHONE', status: 'accepted' });
    expect(await claimAgain(key, args)).toMatchObject({
      stored: { outcome: 'SUCCESS', result: { confirmation: 'CNF-PHONE', status: 'accepted' } },
    });
  });
});

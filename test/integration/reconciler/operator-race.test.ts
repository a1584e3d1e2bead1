import { describe, expect, it } from 'vitest';
import type { ToolCallRequestedEvent } from '../../../libs/events/contracts.js';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import type { OperationResult } from '../../../libs/reconcile/operations.js';
import { openForSuite } from '../../helpers/stack-lifecycle.js';
import { eventually } from '../audit-sink/event-stack.js';
import { startOperatorStack, type OperatorStack } from './operator-stack.js';

/**
 * A person's verdict and a redrive of the same case, on real Kafka, Postgres and Redis, with the
 * executor running every re-submission and a ledger counting the tool's runs. Whatever order they
 * land in, a case resolved as succeeded is never followed by another run of its call: not by a
 * redrive's re-submission, and not by the agent re-running the same turn.
 */
let s: OperatorStack;
openForSuite(async () => (s = await startOperatorStack('ops_race')), {
  openTimeoutMs: 120_000,
  closeTimeoutMs: 60_000,
});

/** `count` calls whose first run failed (EXHAUSTED), each with its case in needs_manual. */
async function exhaustedCases(
  label: string,
  count: number,
): Promise<Array<{ request: ToolCallRequestedEvent; case: ReconciliationCase }>> {
  const made = await Promise.all(
    Array.from({ length: count }, (_, i) => s.request(`${label}-${i}`, 'fails')),
  );
  await s.publish(made.map((m) => m.request));
  return Promise.all(
    made.map(async ({ request }) => ({ request, case: await s.caseIn(request.callId, 'needs_manual') })),
  );
}

interface Trial {
  readonly request: ToolCallRequestedEvent;
  readonly resolved: OperationResult;
  readonly redriven: OperationResult;
  /** Tool runs of the call when the resolution returned. */
  readonly runsAtResolution: number;
}

async function race(
  item: { request: ToolCallRequestedEvent; case: ReconciliationCase },
  redriveHeadStartMs: number,
): Promise<Trial> {
  const assertion = await s.assertion();
  let runsAtResolution = -1;
  const redrive = s.ops.redrive(item.case.caseId, {
    by: 'bob',
    note: 'vault is back; re-submit',
    principalAssertion: assertion,
  });
  if (redriveHeadStartMs > 0) await new Promise((resolve) => setTimeout(resolve, redriveHeadStartMs));
  const resolve = s.ops
    .resolveByHand(item.case.caseId, {
      outcome: 'succeeded',
      by: 'ann',
      note: 'the vault shows the transfer',
      result: { transfer_id: 'TR-manual', status: 'done' },
    })
    .then((answer) => {
      runsAtResolution = s.runs(item.request.idempotencyKey);
      return answer;
    });
  const [redriven, resolved] = await Promise.all([redrive, resolve]);
  return { request: item.request, resolved, redriven, runsAtResolution };
}

/** After everything published was consumed: no case resolved as succeeded ran again afterwards. */
async function expectNoRunAfterSuccess(
  trials: readonly Trial[],
): Promise<{ resolved: number; redriven: number }> {
  await s.drained();
  // Give an executor that picked up a late re-submission time to have run it.
  await new Promise((resolve) => setTimeout(resolve, 500));
  await s.drained();
  let resolved = 0;
  let redriven = 0;
  for (const t of trials) {
    const c = (await s.cases.get({ callId: t.request.callId }))!;
    if (t.redriven.ok) redriven += 1;
    if (c.state !== 'resolved_succeeded') continue;
    resolved += 1;
    expect(t.resolved.ok, `${t.request.callId}: resolved_succeeded but the resolution was refused`).toBe(
      true,
    );
    expect(
      s.runs(t.request.idempotencyKey),
      `${t.request.callId}: the tool ran after the case was resolved as succeeded`,
    ).toBe(t.runsAtResolution);
  }
  return { resolved, redriven };
}

describe('a resolution racing a redrive of the same case', () => {
  it('30 concurrent trials: after resolved_succeeded the tool never runs again', async () => {
    const items = await exhaustedCases('race', 30);
    const trials: Trial[] = [];
    // Five at a time; the redrive starts 0-100 ms ahead, so the resolution lands before, during and
    // after the redrive's move and publish.
    for (let i = 0; i < items.length; i += 5) {
      const batch = items.slice(i, i + 5).map((item, j) => race(item, ((i + j) % 5) * 25));
      trials.push(...(await Promise.all(batch)));
    }
    const { resolved } = await expectNoRunAfterSuccess(trials);
    console.info(
      `resolve vs redrive, ${trials.length} trials: ${resolved} resolved_succeeded, ` +
        `${trials.filter((t) => t.redriven.ok).length} redrives went through`,
    );
    // Every trial ends decided one way: resolved, or redriven (and then run by the executor).
    for (const t of trials) expect(t.resolved.ok || t.redriven.ok).toBe(true);
    expect(resolved).toBeGreaterThan(0);
  }, 240_000);

  it('a redrive whose publish is delayed 1 s: the resolution in between does not let the call run again', async () => {
    const items = await exhaustedCases('slow', 3);
    s.publishDelayMs = 1_000;
    try {
      const trials = await Promise.all(items.map((item) => race(item, 200)));
      const { resolved } = await expectNoRunAfterSuccess(trials);
      expect(resolved).toBe(items.length);
      // The late re-submissions were answered with the resolution, not run.
      for (const t of trials) expect(s.runs(t.request.idempotencyKey)).toBe(1);
    } finally {
      s.publishDelayMs = 0;
    }
  }, 120_000);
});

describe('re-running the turn after a person resolved an EXHAUSTED call', () => {
  it('answers DUPLICATE with the resolved result and does not run the tool', async () => {
    const [item] = await exhaustedCases('rerun', 1);
    const { request } = item!;
    expect(s.runs(request.idempotencyKey)).toBe(1);
    const resolved = await s.ops.resolveByHand(item!.case.caseId, {
      outcome: 'succeeded',
      by: 'ann',
      note: 'done by hand in the vault console',
      result: { transfer_id: 'TR-by-hand', status: 'done' },
    });
    expect(resolved.ok).toBe(true);

    await s.publish([request]);
    // The executor's answers to the call: the first run's failure, then the re-run's.
    const [, rerun] = await eventually('the re-run answered', async () => {
      const mine = (await s.results()).filter((e) => e.callId === request.callId && e.source === 'executor');
      return mine.length >= 2 ? mine : undefined;
    });
    const duplicate = rerun!;
    expect(duplicate).toMatchObject({ outcome: 'DUPLICATE', toolInvocations: 0 });
    expect(JSON.parse(duplicate.payloadJson!)).toEqual({ transfer_id: 'TR-by-hand', status: 'done' });
    await s.drained();
    expect(s.runs(request.idempotencyKey)).toBe(1);
    // The resolution itself reported that it recorded the call's answer.
    expect(resolved).toMatchObject({ delivery: { settled: true } });
  }, 120_000);
});

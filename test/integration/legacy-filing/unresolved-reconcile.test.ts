import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { ExecutionContext } from '../../../libs/core/types.js';
import { runStatusCheck } from '../../../libs/reconcile/status-check.js';
import { call, context, filingArgs, legacyKey, legacyStack, type LegacyStack } from './harness.js';

/**
 * When the status side of the legacy service is down too, a lost answer cannot be settled at once:
 * the call ends UNRESOLVED (never failed), a redelivery does not file again, and the same status
 * check — as the reconciler runs it, from another "process" with only the dead letter's facts —
 * settles it once the service answers again.
 */
describe('submit_filing when the outcome cannot be checked', () => {
  let stack: LegacyStack;
  let outage: 'none' | 'lose-after-commit' | 'lose-before-commit' | 'status-only' = 'none';

  beforeAll(async () => {
    // The outage starts the moment a filing is sent, so the pre-check before it still works.
    const onSend: typeof fetch = async (input, init) => {
      if (init?.method === 'POST' && outage !== 'none') {
        stack.server.faults.setRates({
          statusFailure: 1,
          ...(outage === 'lose-after-commit' ? { dropAfterCommit: 1 } : {}),
          ...(outage === 'lose-before-commit' ? { dropBeforeCommit: 1 } : {}),
        });
      }
      return fetch(input, init);
    };
    stack = await legacyStack({ faults: {}, seed: 9, fetch: onSend });
  });
  afterAll(async () => {
    await stack.close();
  });

  const reconcilerCheck = async (args: Record<string, unknown>, idempotencyKey: string) => {
    const parsed = await stack.tool.input.parseAsync(args);
    const ctx: ExecutionContext = {
      principal: { id: 'reconciler-1', tenant: 't1', kind: 'service', scopes: [], roles: [] },
      tenant: 't1',
      taskId: 'from-the-dead-letter',
      step: 0,
      index: 0,
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    };
    return runStatusCheck(
      stack.tool,
      parsed,
      { ctx, idempotencyKey, attempt: 1 },
      { timeoutMs: 5_000, clock: systemClock, signal: new AbortController().signal },
    );
  };

  it('an answer lost after the commit, with status checks failing, is UNRESOLVED and later settled as filed', async () => {
    const args = filingArgs(1);
    outage = 'lose-after-commit';
    const first = await stack.pipeline.run(call(args, 'u-1'), context('unresolved-1'));
    outage = 'none';
    expect(first.result.outcome).toBe('UNRESOLVED');
    expect(first.result.error?.code).toBe('UNRESOLVED');
    expect((await stack.rowsByKey()).get(legacyKey(args))).toBe(1);

    // A redelivery of the same call is answered from the idempotency record: not run, not filed again.
    const again = await stack.pipeline.run(call(args, 'u-1'), context('unresolved-1'));
    expect(again.result.outcome).toBe('UNRESOLVED');
    expect(again.result.toolInvocations).toBe(0);

    stack.server.faults.setRates({});
    const settled = await reconcilerCheck(args, first.result.idempotencyKey!);
    const { rows } = await stack.db.pool.query<{ confirmation_no: string }>(
      'SELECT confirmation_no FROM legacy_filings WHERE filer_id = $1',
      [args.filer_id],
    );
    expect(settled.answer).toEqual({
      state: 'applied',
      result: expect.objectContaining({
        confirmation_number: rows[0]!.confirmation_no,
        confirmed_by: 'status_check',
      }),
    });
    expect((await stack.rowsByKey()).get(legacyKey(args))).toBe(1);
  });

  it('a connection cut before anything was stored is UNRESOLVED, then settled as not filed', async () => {
    const args = filingArgs(2);
    outage = 'lose-before-commit';
    const first = await stack.pipeline.run(call(args, 'u-2'), context('unresolved-2'));
    outage = 'none';
    stack.server.faults.setRates({});
    expect(first.result.outcome).toBe('UNRESOLVED');
    expect((await stack.rowsByKey()).get(legacyKey(args))).toBeUndefined();
    // The last send's deadline has passed (the executor checked past it): "absent" is final.
    const settled = await reconcilerCheck(args, first.result.idempotencyKey!);
    expect(settled.answer).toEqual({ state: 'not-applied' });
  });

  it('a status side down before sending files nothing and says so', async () => {
    const args = filingArgs(3);
    const submitsBefore = stack.server.stats().submits;
    stack.server.faults.setRates({ statusFailure: 1 });
    const run = await stack.pipeline.run(call(args, 'u-3'), context('unresolved-3'));
    stack.server.faults.setRates({});
    expect(run.result.outcome).toBe('EXECUTION_ERROR');
    expect(run.result.error).toMatchObject({ code: 'SERVER_ERROR', retryable: true });
    expect(run.result.error?.message).toMatch(/nothing was sent/);
    expect((await stack.rowsByKey()).get(legacyKey(args))).toBeUndefined();
    expect(stack.server.stats().submits).toBe(submitsBefore);
  });
});

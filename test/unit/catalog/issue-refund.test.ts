import { describe, expect, it } from 'vitest';
import type { ExecutionContext, Principal } from '../../../libs/core/types.js';
import { NOT_AUTHORIZED_MESSAGE } from '../../../libs/guards/authorize.js';
import type { FaultInjector } from '../../../services/downstreams/faults.js';
import { closeAfterEach } from '../../helpers/close-after-each.js';
import {
  ana,
  ben,
  ctxFor,
  manager,
  storeHarness,
  supportDesk,
  toolCall,
  type StoreHarness,
} from './store-harness.js';

let h: StoreHarness;
closeAfterEach(() => h);

const refund = (args: Record<string, unknown>) => toolCall('issue_refund', args);
/** A fresh issue_refund call with `args` by `principal`, run to the end. */
const refundAs = (principal: Principal, args: Record<string, unknown>, ctx?: Partial<ExecutionContext>) =>
  h.call('issue_refund', args, principal, ctx);
const ledger = (orderId?: string) =>
  h.downstreams.payments.ledger({ tenant: 't1', ...(orderId === undefined ? {} : { order_id: orderId }) });
const paymentRequests = () => h.downstreams.faults.payments.received('refund');

describe('issue_refund through the guard pipeline', () => {
  it('story 1: the owner refunds O-5512 ($49.99): one ledger row under the forwarded key', async () => {
    h = storeHarness();
    const { result, audit } = await refundAs(ana, { order_id: 'O-5512', amount: 49.99, reason: 'damaged' });
    expect(result.outcome).toBe('SUCCESS');
    expect(result.payload).toMatchObject({
      order_id: 'O-5512',
      amount: 49.99,
      currency: 'USD',
      reason: 'damaged',
      status: 'succeeded',
    });
    const rows = await ledger('O-5512');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ amount_cents: 4999, idempotency_key: result.idempotencyKey });
    expect((result.payload as { refund_id: string }).refund_id).toBe(rows[0]!.refund_id);
    expect(audit.arguments).toEqual({ order_id: 'O-5512', amount: 49.99, reason: 'damaged' });
  });

  it("story 2: someone else's order is refused and the payment service is never called", async () => {
    h = storeHarness();
    const { result, audit } = await refundAs(ben, { order_id: 'O-5512', amount: 49.99, reason: 'damaged' });
    expect(result.outcome).toBe('UNAUTHORIZED');
    expect(result.error).toEqual({ code: 'UNAUTHORIZED', message: NOT_AUTHORIZED_MESSAGE, retryable: false });
    expect(result.toolInvocations).toBe(0);
    expect(paymentRequests()).toBe(0);
    expect(await ledger()).toEqual([]);
    expect(audit.decisions.at(-1)).toMatchObject({ stage: 'authorize', decision: 'refuse' });
  });

  it('an unknown order and another tenant’s order get the same refusal (no id oracle)', async () => {
    h = storeHarness();
    const unknown = await refundAs(ana, { order_id: 'O-0000', amount: 5, reason: 'other' });
    // O-4400 belongs to tenant t2's customer "C-1"; Ana is C-1 in t1.
    const foreign = await refundAs(ana, { order_id: 'O-4400', amount: 5, reason: 'other' });
    expect(unknown.result.error).toEqual(foreign.result.error);
    expect(foreign.result.outcome).toBe('UNAUTHORIZED');
    expect(paymentRequests()).toBe(0);
  });

  it('an argument claiming approval is refused as unknown, never read as authority', async () => {
    h = storeHarness();
    const { result } = await refundAs(ben, {
      order_id: 'O-7788',
      amount: 30,
      reason: 'damaged',
      approved_by: 'manager',
    });
    expect(result.outcome).toBe('SCHEMA_INVALID');
    expect(result.error?.message).toContain('approved_by');
    expect(paymentRequests()).toBe(0);
  });

  it('story 3: $499.90 by the support assistant is refused by policy with an actionable reason', async () => {
    h = storeHarness();
    const { result, audit } = await refundAs(supportDesk, {
      order_id: 'O-9001',
      amount: 499.9,
      reason: 'damaged',
    });
    expect(result.outcome).toBe('POLICY_VIOLATION');
    expect(result.error).toMatchObject({
      code: 'POLICY_VIOLATION',
      message:
        'Support may refund at most $50 per order within 30 days, in total; with this refund the order would reach $499.9.',
      suggestedFix: 'Tell the customer a manager has to approve this refund and hand the case to a manager.',
      retryable: true,
    });
    expect(paymentRequests()).toBe(0);
    expect(audit.decisions.map((d) => d.stage)).toEqual([
      'resolve',
      'validate-input',
      'authorize',
      'rate-limit',
      'business-rules',
    ]);
  });

  it('the limit is data: $50.00 passes for support, a customer is held to the self-service cap, a manager to neither', async () => {
    h = storeHarness();
    const atLimit = await refundAs(supportDesk, { order_id: 'O-9001', amount: 50, reason: 'damaged' });
    expect(atLimit.result.outcome).toBe('SUCCESS');
    const self = await refundAs(ana, { order_id: 'O-9001', amount: 499.9, reason: 'damaged' });
    expect(self.result.outcome).toBe('POLICY_VIOLATION');
    expect(self.result.error?.message).toBe(
      'Self-service refunds are limited to $200 per order within 30 days, in total; with this refund the order would reach $499.9.',
    );
    const boss = await refundAs(manager, { order_id: 'O-9001', amount: 449.9, reason: 'damaged' });
    expect(boss.result.outcome).toBe('SUCCESS');
    expect((await ledger('O-9001')).map((r) => r.amount_cents)).toEqual([5000, 44990]);
  });

  it('more than the refundable balance is refused by the payment service with what is left', async () => {
    h = storeHarness();
    await refundAs(ana, { order_id: 'O-5512', amount: 40, reason: 'damaged' });
    const over = await refundAs(ana, { order_id: 'O-5512', amount: 20, reason: 'damaged' });
    expect(over.result.outcome).toBe('EXECUTION_ERROR');
    expect(over.result.error).toMatchObject({ code: 'CALLER_ERROR', retryable: true });
    expect(over.result.error?.message).toContain('at most $9.99');
    const full = await refundAs(ana, { order_id: 'O-5512', amount: 9.99, reason: 'damaged' });
    expect(full.result.outcome).toBe('SUCCESS');
    const again = await refundAs(ana, { order_id: 'O-5512', amount: 1, reason: 'damaged' });
    expect(again.result.error).toMatchObject({ code: 'CALLER_ERROR', retryable: false });
    expect(again.result.error?.message).toContain('already been refunded in full');
    expect((await ledger('O-5512')).map((r) => r.amount_cents)).toEqual([4000, 999]);
  });
});

describe('issue_refund when the payment service misbehaves', () => {
  it('story 4: the first answer is lost after the refund applied; the retry carries the same key and pays once', async () => {
    h = storeHarness();
    h.downstreams.faults.payments.loseResponseNext(1);
    const { result, audit } = await refundAs(supportDesk, {
      order_id: 'O-7788',
      amount: 34.5,
      reason: 'damaged',
    });
    expect(result.outcome).toBe('SUCCESS');
    expect(result.toolInvocations).toBe(2);
    expect(paymentRequests()).toBe(2);
    expect(h.downstreams.faults.payments.injected('lose-response')).toBe(1);
    const rows = await ledger('O-7788');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.idempotency_key).toBe(result.idempotencyKey);
    expect((result.payload as { refund_id: string }).refund_id).toBe(rows[0]!.refund_id);
    expect(audit.attempts.map((a) => a.result)).toEqual(['TIMEOUT', 'ok']);
  });

  it('a timeout after the refund applied (the answer never comes) is retried with the same key and pays once', async () => {
    h = storeHarness();
    h.downstreams.faults.payments.loseResponseNext(1, { silently: true });
    const { result, audit } = await refundAs(supportDesk, {
      order_id: 'O-7788',
      amount: 34.5,
      reason: 'damaged',
    });
    expect(result.outcome).toBe('SUCCESS');
    expect(audit.attempts.map((a) => a.result)).toEqual(['TIMEOUT', 'ok']);
    expect(audit.attempts[0]!.durationMs).toBeGreaterThanOrEqual(2_000);
    expect(await ledger('O-7788')).toHaveLength(1);
  });

  it('the same call delivered again is answered from the first result without a payment request', async () => {
    h = storeHarness();
    const ctx = ctxFor(ana);
    const first = await h.run(refund({ order_id: 'O-5512', amount: 49.99, reason: 'damaged' }), ctx);
    const second = await h.run(
      { ...refund({ order_id: 'O-5512', amount: 49.99, reason: 'damaged' }), id: 'redelivered' },
      ctx,
    );
    expect(second.result.outcome).toBe('DUPLICATE');
    expect(second.result.payload).toEqual(first.result.payload);
    expect(paymentRequests()).toBe(1);
    expect(await ledger('O-5512')).toHaveLength(1);
  });

  it.each<[string, (payments: FaultInjector) => void, string, number]>([
    [
      '503 twice, then success: retried with the same key, one ledger row',
      (payments) => payments.failNext(2),
      'SUCCESS',
      1,
    ],
    [
      'a payment service that never answers leaves the refund UNRESOLVED, never "failed"',
      (payments) => payments.hangNext(3),
      'UNRESOLVED',
      0,
    ],
  ])('%s', async (_, fault, outcome, rows) => {
    h = storeHarness();
    fault(h.downstreams.faults.payments);
    const { result } = await refundAs(ben, { order_id: 'O-7788', amount: 10, reason: 'late' });
    expect(result.outcome).toBe(outcome);
    expect(result.toolInvocations).toBe(3);
    expect(await ledger('O-7788')).toHaveLength(rows);
  });

  it('story 5: two refunds in one turn run independently and each reports its own outcome', async () => {
    h = storeHarness();
    await refundAs(ana, { order_id: 'O-5512', amount: 49.99, reason: 'damaged' });
    const turn = { taskId: 'task-two-refunds', step: 1 };
    const [a, b] = await Promise.all([
      refundAs(
        supportDesk,
        { order_id: 'O-9001', amount: 25, reason: 'damaged' },
        {
          ...turn,
          index: 0,
        },
      ),
      refundAs(
        supportDesk,
        { order_id: 'O-5512', amount: 10, reason: 'damaged' },
        {
          ...turn,
          index: 1,
        },
      ),
    ]);
    expect(a.result.outcome).toBe('SUCCESS');
    expect(b.result.outcome).toBe('EXECUTION_ERROR');
    expect(b.result.error?.message).toContain('already been refunded in full');
    expect(a.result.callId).not.toBe(b.result.callId);
    expect((await ledger()).map((r) => r.order_id)).toEqual(['O-5512', 'O-9001']);
  });
});

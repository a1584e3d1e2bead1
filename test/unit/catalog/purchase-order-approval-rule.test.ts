import { describe, expect, it } from 'vitest';
import { purchaseOrderApprovalRule } from '../../../services/catalog/tools/purchase-order-shared.js';

describe('purchaseOrderApprovalRule', () => {
  it('none up to $1,000; one approver above; two different people above $10,000; the reason names the total', () => {
    expect(purchaseOrderApprovalRule(100_000, {})).toBeUndefined();
    expect(purchaseOrderApprovalRule(930_000, {})).toEqual({
      rule: 'purchase-order-total',
      reason: "orders above $1,000 need a manager's approval; this order totals $9,300",
      approvers: 1,
    });
    expect(purchaseOrderApprovalRule(1_000_000, {})?.approvers).toBe(1);
    expect(purchaseOrderApprovalRule(1_000_001, {})).toEqual({
      rule: 'purchase-order-total',
      reason: 'orders above $10,000 need the approval of two different people; this order totals $10,000.01',
      approvers: 2,
    });
  });

  it('both thresholds are configurable', () => {
    const deps = { approvalThresholdCents: 50_000, twoApproverThresholdCents: 200_000 };
    expect(purchaseOrderApprovalRule(50_000, deps)).toBeUndefined();
    expect(purchaseOrderApprovalRule(50_001, deps)?.reason).toContain('orders above $500 need');
    expect(purchaseOrderApprovalRule(200_001, deps)).toMatchObject({ approvers: 2 });
  });
});

import { describe, expect, it } from 'vitest';
import {
  approvalTransition,
  canonicalActor,
  decodeApprovalCursor,
  encodeApprovalCursor,
  fourEyesRefusal,
  newApprovalRequest,
  pageSizeOf,
  stateAt,
  type ApprovalAction,
} from '../../../libs/patterns/approval/approval-rules.js';
import type { ApprovalRequest } from '../../../libs/ports/approval-store.js';

const T0 = 1_000_000;

function pending(approvers = 1): ApprovalRequest {
  return newApprovalRequest(
    {
      id: 'jti-1',
      tenant: 't1',
      tool: 'create_purchase_order',
      toolVersion: '1.0.0',
      arguments: { sku: 'SKU-21', quantity: 30, supplier_id: 'SUP-2' },
      argumentsHash: 'a'.repeat(64),
      requester: 'warehouse-bot:2',
      onBehalfOf: 'W-2',
      rule: { rule: 'purchase-order-total', reason: 'above $1,000', approvers },
      expiresAtMs: T0 + 600_000,
    },
    T0,
  );
}

/** Applies `actions` in turn, each to what the previous one left; throws on a refusal. */
function after(request: ApprovalRequest, ...actions: ApprovalAction[]): ApprovalRequest {
  return actions.reduce((r, a) => {
    const step = approvalTransition(r, a, T0 + 1);
    if (!step.ok) throw new Error(`refused: ${step.refusal}`);
    return step.next;
  }, request);
}

const approve = (by: string): ApprovalAction => ({ kind: 'approve', by, note: 'ok' });
const reject = (by: string): ApprovalAction => ({ kind: 'reject', by, note: 'no' });
const redeem = (holder: string): ApprovalAction => ({ kind: 'redeem', holder });
const refusalOf = (r: ApprovalRequest, a: ApprovalAction, now = T0 + 1) => {
  const step = approvalTransition(r, a, now);
  return step.ok ? 'ok' : step.refusal;
};

describe('canonicalActor', () => {
  it("strips blanks and the console's operator: prefix, nothing else", () => {
    expect(canonicalActor('operator:W-2')).toBe('W-2');
    expect(canonicalActor('  operator: operator:W-2 ')).toBe('W-2');
    expect(canonicalActor('W-2')).toBe('W-2');
    expect(canonicalActor('agent:purchasing')).toBe('agent:purchasing');
    expect(canonicalActor('w-2')).not.toBe(canonicalActor('W-2'));
  });
});

describe('four eyes', () => {
  it.each([
    ['warehouse-bot:2', 'requester'],
    ['operator:warehouse-bot:2', 'requester'],
    ['W-2', 'on-behalf-of'],
    ['operator:W-2', 'on-behalf-of'],
    [' W-2', 'on-behalf-of'],
  ])('%s may not approve (%s)', (by, refusal) => {
    expect(fourEyesRefusal(pending(), by)).toBe(refusal);
    expect(refusalOf(pending(), approve(by))).toBe(refusal);
  });

  it('the same person twice counts once, in any spelling', () => {
    const once = after(pending(2), approve('mia'));
    expect(once.state).toBe('pending');
    expect(refusalOf(once, approve('operator:mia'))).toBe('already-approved-by-you');
    expect(after(once, approve('noah')).state).toBe('approved');
  });

  it('a request acting for nobody refuses only the requester', () => {
    const self = { ...pending(), onBehalfOf: undefined };
    expect(fourEyesRefusal(self, 'W-2')).toBeUndefined();
    expect(fourEyesRefusal(self, 'warehouse-bot:2')).toBe('requester');
  });
});

describe('the approval state machine', () => {
  it('pending → approved → redeemed, each step one version and one event naming who', () => {
    const approved = approvalTransition(pending(), approve('operator:mia'), T0 + 5);
    expect(approved).toMatchObject({
      ok: true,
      next: { state: 'approved', version: 2, approvals: [{ by: 'mia', note: 'ok', atMs: T0 + 5 }] },
      event: { from: 'pending', to: 'approved', by: 'mia', version: 2, atMs: T0 + 5 },
    });
    const redeemed = approvalTransition(after(pending(), approve('mia')), redeem('call-1'), T0 + 6);
    expect(redeemed).toMatchObject({
      ok: true,
      next: { state: 'redeemed', version: 3, redeemedBy: 'call-1' },
      event: { from: 'approved', to: 'redeemed', by: 'gate' },
    });
  });

  it('redeeming: the same call again passes unchanged (no event); another call, or an unapproved request, is refused', () => {
    const redeemed = after(pending(), approve('mia'), redeem('call-1'));
    const again = approvalTransition(redeemed, redeem('call-1'), T0 + 2);
    expect(again).toEqual({ ok: true, next: redeemed });
    expect(refusalOf(redeemed, redeem('call-2'))).toBe('redeemed-by-another-call');
    expect(refusalOf(pending(), redeem('call-1'))).toBe('not-approved');
    expect(refusalOf(after(pending(), reject('mia')), redeem('call-1'))).toBe('not-approved');
  });

  it('only a pending request can be decided', () => {
    for (const decided of [
      after(pending(), approve('mia')),
      after(pending(), reject('mia')),
      after(pending(), approve('mia'), redeem('call-1')),
    ]) {
      expect(refusalOf(decided, approve('noah'))).toBe('not-pending');
      expect(refusalOf(decided, reject('noah'))).toBe('not-pending');
    }
  });

  it('anyone allowed to decide may reject, the requester too: a rejection releases nothing', () => {
    expect(after(pending(), reject('operator:warehouse-bot:2')).rejection).toMatchObject({
      by: 'warehouse-bot:2',
    });
  });

  it('at its expiry a pending or approved request is expired and nothing moves it', () => {
    const end = T0 + 600_000;
    expect(stateAt(pending(), end - 1)).toBe('pending');
    expect(stateAt(pending(), end)).toBe('expired');
    expect(stateAt(after(pending(), approve('mia')), end)).toBe('expired');
    expect(stateAt(after(pending(), reject('mia')), end)).toBe('rejected');
    expect(refusalOf(pending(), approve('mia'), end)).toBe('expired');
    expect(refusalOf(pending(), reject('mia'), end)).toBe('expired');
    expect(refusalOf(after(pending(), approve('mia')), redeem('call-1'), end)).toBe('expired');
    // A redemption made in time stands after the expiry.
    expect(refusalOf(after(pending(), approve('mia'), redeem('call-1')), redeem('call-1'), end)).toBe('ok');
  });

  it('refuses to name nobody, and drafts no gate would record', () => {
    expect(() => approvalTransition(pending(), approve(' operator: '), T0)).toThrow(RangeError);
    expect(() => approvalTransition(pending(), redeem(''), T0)).toThrow(RangeError);
    const d = pending();
    expect(() => newApprovalRequest({ ...d, requester: '' }, T0)).toThrow(RangeError);
    expect(() => newApprovalRequest({ ...d, rule: { ...d.rule, approvers: 11 } }, T0)).toThrow(RangeError);
    expect(() => newApprovalRequest({ ...d, rule: { ...d.rule, reason: ' ' } }, T0)).toThrow(RangeError);
  });
});

describe('listing positions', () => {
  it('round-trip, and anything else is a RangeError', () => {
    const c = { createdAtMs: T0, id: 'jti-1' };
    expect(decodeApprovalCursor(encodeApprovalCursor(c))).toEqual(c);
    expect(() => decodeApprovalCursor('nope')).toThrow(RangeError);
    expect(() => decodeApprovalCursor(Buffer.from('[1.5,"x"]').toString('base64url'))).toThrow(RangeError);
    expect(pageSizeOf(undefined)).toBe(50);
    expect(() => pageSizeOf(501)).toThrow(RangeError);
  });
});

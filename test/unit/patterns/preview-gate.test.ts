import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryApprovalStore } from '../../../libs/adapters/memory/approval-store.js';
import { MemorySingleUseStore } from '../../../libs/adapters/memory/single-use-store.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import {
  PreviewGate,
  previewRefusalError,
  type ConfirmRequest,
} from '../../../libs/patterns/preview/index.js';
import type { ApprovalRequest, ApprovalStore } from '../../../libs/ports/approval-store.js';
import { agentPrincipal } from '../../helpers/principals.js';

const T0 = Date.parse('2026-11-30T09:00:00.000Z');
const buyer = agentPrincipal('agent:purchasing', 'W-1', ['warehouse'], ['purchase_orders:write']);
const args = { sku: 'SKU-7', quantity: 30, supplier_id: 'SUP-1' };

function setup(requireApproval = false, stored?: (clock: ManualClock) => ApprovalStore) {
  const clock = new ManualClock(T0);
  const store = new MemorySingleUseStore(clock);
  const approvals = stored?.(clock) ?? new MemoryApprovalStore(clock);
  const gate = new PreviewGate({ key: { alg: 'HS256', secret: randomBytes(32) }, store, approvals, clock });
  let version = 'v-1';
  let preview: unknown = { total_cents: 84_240 };
  const request = () => ({
    principal: buyer,
    tool: 'create_purchase_order',
    arguments: args,
    resourceKey: 't1:inventory:SKU-7',
    resourceVersion: version,
    policyVersion: 'p-1',
    preview,
  });
  const issue = () =>
    gate.issue({
      principal: buyer,
      tool: 'create_purchase_order',
      arguments: args,
      resourceKey: 't1:inventory:SKU-7',
      resourceVersion: version,
      policyVersion: 'p-1',
      preview,
      requireApproval,
    });
  const confirm = (token: string, holder: string, over: Partial<ConfirmRequest> = {}) =>
    gate.confirm({
      token,
      principal: buyer,
      tool: 'create_purchase_order',
      arguments: args,
      resourceKey: 't1:inventory:SKU-7',
      policyVersion: 'p-1',
      holder,
      current: () => Promise.resolve({ resourceVersion: version, preview }),
      ...over,
    });
  return {
    clock,
    store,
    approvals,
    gate,
    request,
    issue,
    confirm,
    setVersion: (v: string) => (version = v),
    setPreview: (p: unknown) => (preview = p),
  };
}

const reasonOf = (c: Awaited<ReturnType<ReturnType<typeof setup>['confirm']>>) =>
  c.ok ? 'ok' : c.refusal.reason;

describe('PreviewGate', () => {
  it('a token is redeemed once; another call with it is refused as already used', async () => {
    const s = setup();
    const { token } = await s.issue();
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('ok');
    expect(reasonOf(await s.confirm(token, 'call-2'))).toBe('already-used');
  });

  it('a retry of the same logical call (same holder) is not refused by its own first attempt', async () => {
    const s = setup();
    const { token } = await s.issue();
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('ok');
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('ok');
  });

  it('refusals before the single-use step leave the token usable', async () => {
    const s = setup();
    const { token } = await s.issue();
    const other = await s.confirm(token, 'call-1', { arguments: { ...args, quantity: 99 } });
    expect(reasonOf(other)).toBe('arguments-changed');
    expect(reasonOf(await s.confirm(token, 'call-2'))).toBe('ok');
  });

  it('the resource changed since the preview: refused, and the stale token is used up', async () => {
    const s = setup();
    const { token } = await s.issue();
    s.setVersion('v-2');
    const got = await s.confirm(token, 'call-1');
    expect(got).toMatchObject({
      ok: false,
      refusal: { reason: 'resource-changed', previewedVersion: 'v-1', currentVersion: 'v-2' },
    });
    s.setVersion('v-1');
    expect(reasonOf(await s.confirm(token, 'call-2'))).toBe('already-used');
  });

  it('what the confirm would do now differs from what was previewed: refused', async () => {
    const s = setup();
    const { token } = await s.issue();
    s.setPreview({ total_cents: 99_999 });
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('preview-changed');
  });

  it('expired tokens are refused, with the expiry time in the message', async () => {
    const s = setup();
    const { token, claims } = await s.issue();
    await s.clock.advance(600_000);
    const got = await s.confirm(token, 'call-1');
    expect(got).toEqual({ ok: false, refusal: { reason: 'expired', expiredAtMs: claims.expiresAtMs } });
  });

  it('approval required: awaiting approval (token not used up), then accepted once after approval', async () => {
    const s = setup(true);
    const { token, claims } = await s.issue();
    expect(claims.requiresApproval).toBe(true);
    const waiting = await s.confirm(token, 'call-1');
    expect(waiting).toEqual({
      ok: false,
      refusal: { reason: 'awaiting-approval', jti: claims.jti, expiresAtMs: claims.expiresAtMs },
    });
    if (waiting.ok) throw new Error('unreachable');
    const error = previewRefusalError(waiting.refusal, { previewTool: 'preview_purchase_order' });
    expect(error.code).toBe('POLICY_VIOLATION');
    expect(error.message).toContain('awaiting approval');
    expect(error.message).toContain(claims.jti);

    const recorded = await s.approvals.get(claims.jti);
    expect(recorded).toMatchObject({
      state: 'pending',
      tenant: 't1',
      tool: 'create_purchase_order',
      arguments: args,
      argumentsHash: claims.argumentsHash,
      requester: 'agent:purchasing',
      onBehalfOf: 'W-1',
      expiresAtMs: claims.expiresAtMs,
    });
    // Asking again records nothing new.
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('awaiting-approval');
    expect(await s.approvals.events(claims.jti)).toHaveLength(1);

    expect((await s.approvals.approve(claims.jti, 'operator:M-1', 'fine')).ok).toBe(true);
    const ok = await s.confirm(token, 'call-1');
    expect(ok).toMatchObject({ ok: true, approval: { state: 'redeemed', redeemedBy: 'call-1' } });
    expect(ok.ok && ok.approval?.approvals.map((a) => a.by)).toEqual(['M-1']);
    // A retry of the same logical call passes; any other call is refused.
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('ok');
    expect(reasonOf(await s.confirm(token, 'call-2'))).toBe('already-used');
  });

  it('the requester and the user it acts for cannot approve, in any spelling (four eyes)', async () => {
    const s = setup(true);
    const { token, claims } = await s.issue();
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('awaiting-approval');
    for (const [by, refusal] of [
      ['W-1', 'on-behalf-of'],
      ['operator:W-1', 'on-behalf-of'],
      [' operator:W-1 ', 'on-behalf-of'],
      ['agent:purchasing', 'requester'],
      ['operator:agent:purchasing', 'requester'],
    ] as const) {
      expect(await s.approvals.approve(claims.jti, by, 'mine')).toMatchObject({ ok: false, refusal });
    }
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('awaiting-approval');
  });

  it('a rejected request can never be confirmed, not even after another approval attempt', async () => {
    const s = setup(true);
    const { token, claims } = await s.issue();
    await s.confirm(token, 'call-1');
    expect((await s.approvals.reject(claims.jti, 'M-2', 'no')).ok).toBe(true);
    expect(await s.approvals.approve(claims.jti, 'M-1', 'yes')).toMatchObject({
      ok: false,
      refusal: 'not-pending',
    });
    const refused = await s.confirm(token, 'call-1');
    expect(reasonOf(refused)).toBe('rejected');
    if (refused.ok) throw new Error('unreachable');
    expect(previewRefusalError(refused.refusal, { previewTool: 'preview_purchase_order' }).retryable).toBe(
      false,
    );
  });

  it('a token whose rule asks for two approvers waits until two different people approved', async () => {
    const s = setup(true);
    const rule = {
      rule: 'purchase-order-total',
      reason: 'orders above $10,000 need two people',
      approvers: 2,
    };
    const { token, claims } = await s.gate.issue({ ...s.request(), approvalRule: rule });
    await s.confirm(token, 'call-1');
    expect((await s.approvals.get(claims.jti))?.rule).toEqual(rule);
    expect((await s.approvals.approve(claims.jti, 'M-1', 'ok')).ok).toBe(true);
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('awaiting-approval');
    expect(await s.approvals.approve(claims.jti, 'operator:M-1', 'again')).toMatchObject({
      ok: false,
      refusal: 'already-approved-by-you',
    });
    expect((await s.approvals.approve(claims.jti, 'M-2', 'ok')).ok).toBe(true);
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('ok');
  });

  it('the gate re-checks what the store answers: an approval by the user acted for, or a request binding anything else, releases nothing', async () => {
    let answer: (real: ApprovalRequest) => ApprovalRequest = (r) => r;
    let redeemed = 0;
    const s = setup(true, (clock) => {
      const real = new MemoryApprovalStore(clock);
      return {
        get: (id) => real.get(id),
        create: async (draft) => {
          const made = await real.create(draft);
          return { ...made, request: answer(made.request) };
        },
        redeem: (id, holder) => {
          redeemed += 1;
          return real.redeem(id, holder);
        },
        approve: (id, by, note) => real.approve(id, by, note),
        reject: (id, by, note) => real.reject(id, by, note),
        list: (l) => real.list(l),
        counts: (scope) => real.counts(scope),
        events: (id) => real.events(id),
      };
    });
    const { token } = await s.issue();
    const approvedBy =
      (by: string) =>
      (r: ApprovalRequest): ApprovalRequest => ({
        ...r,
        state: 'approved',
        approvals: [{ by, note: 'mine', atMs: T0 }],
      });
    answer = approvedBy('operator:W-1');
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('self-approved');
    answer = approvedBy('agent:purchasing');
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('self-approved');
    answer = (r) => ({ ...approvedBy('M-1')(r), argumentsHash: 'f'.repeat(64) });
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('wrong-principal');
    answer = (r) => ({ ...approvedBy('M-1')(r), onBehalfOf: 'W-9' });
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('wrong-principal');
    expect(redeemed).toBe(0);
  });

  it('a token that needs no approval is not held up by the approval step', async () => {
    const s = setup(false);
    const { token, claims } = await s.issue();
    expect(claims.requiresApproval).toBe(false);
    const got = await s.confirm(token, 'call-1');
    expect(got).toMatchObject({ ok: true });
    expect(got.ok && got.approval).toBeUndefined();
  });
});

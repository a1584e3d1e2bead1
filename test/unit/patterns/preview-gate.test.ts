import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemorySingleUseStore } from '../../../libs/adapters/memory/single-use-store.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import {
  PreviewGate,
  approvePreview,
  previewRefusalError,
  type ConfirmRequest,
} from '../../../libs/patterns/preview/index.js';
import { agentPrincipal } from '../../helpers/principals.js';

const T0 = Date.parse('2026-11-30T09:00:00.000Z');
const buyer = agentPrincipal('agent:purchasing', 'W-1', ['warehouse'], ['purchase_orders:write']);
const args = { sku: 'SKU-7', quantity: 30, supplier_id: 'SUP-1' };

function setup(requireApproval = false) {
  const clock = new ManualClock(T0);
  const store = new MemorySingleUseStore(clock);
  const gate = new PreviewGate({ key: { alg: 'HS256', secret: randomBytes(32) }, store, clock });
  let version = 'v-1';
  let preview: unknown = { total_cents: 84_240 };
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

    const approved = await approvePreview(s.store, { jti: claims.jti, approver: 'manager:M-1' });
    expect(approved.recorded).toBe(true);
    const ok = await s.confirm(token, 'call-1');
    expect(ok).toMatchObject({ ok: true, approval: { approver: 'manager:M-1', approvedAtMs: T0 } });
    expect(reasonOf(await s.confirm(token, 'call-2'))).toBe('already-used');
  });

  it('an approval by the requester does not count (four eyes)', async () => {
    const s = setup(true);
    const { token, claims } = await s.issue();
    await approvePreview(s.store, { jti: claims.jti, approver: 'W-1' });
    expect(reasonOf(await s.confirm(token, 'call-1'))).toBe('self-approved');
    const late = await approvePreview(s.store, { jti: claims.jti, approver: 'manager:M-1' });
    expect(late.recorded).toBe(false);
    expect(late.approval.approver).toBe('W-1');
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

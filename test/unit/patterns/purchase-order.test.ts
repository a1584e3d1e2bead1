import { randomBytes } from 'node:crypto';
import { SignJWT, base64url, type JWTPayload } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { PREVIEW_TOKEN_TYPE, argumentsHash } from '../../../libs/patterns/preview/index.js';
import type { Principal } from '../../../libs/core/types.js';
import { REDACTED } from '../../../libs/pipeline/build-audit-record.js';
import type { PreviewPurchaseOrderOutput } from '../../../services/catalog/tools/purchase-order-preview.js';
import {
  buyer,
  ctxFor,
  otherBuyer,
  patternHarness,
  support,
  toolCall,
  type PatternHarness,
} from './pattern-harness.js';

let h: PatternHarness;
afterEach(() => h.close());

const ORDER = { sku: 'SKU-7', quantity: 10, supplier_id: 'SUP-1' };
/** 40 × $26 + 8 % tax, free shipping from $500: $1,123.20, above the $1,000 approval threshold. */
const BIG_ORDER = { sku: 'SKU-7', quantity: 40, supplier_id: 'SUP-1' };

async function preview(args: Record<string, unknown> = ORDER, principal = buyer) {
  const { result } = await h.run(toolCall('preview_purchase_order', args), ctxFor(principal));
  expect(result.outcome).toBe('SUCCESS');
  return result.payload as PreviewPurchaseOrderOutput;
}

function create(token: string, args: Record<string, unknown> = ORDER, principal = buyer, step = 1) {
  return h.run(
    toolCall('create_purchase_order', { ...args, preview_token: token }),
    ctxFor(principal, { taskId: 'po-task', step }),
  );
}

/**
 * A confirm spoiled after a good preview of `previewed` (default ORDER): `before` runs between the
 * two, `token` turns the preview's token into the one sent, with `args` (default ORDER) as
 * `principal` (default the buyer). `refused` is what the result must match; nothing is placed.
 */
interface RefusedConfirm {
  readonly title: string;
  readonly previewed?: Record<string, unknown>;
  readonly before?: (preview: PreviewPurchaseOrderOutput) => unknown;
  readonly token?: (token: string) => string | Promise<string>;
  readonly args?: Record<string, unknown>;
  readonly principal?: Principal;
  readonly refused: Record<string, unknown>;
}

const payloadOf = (token: string): JWTPayload =>
  JSON.parse(new TextDecoder().decode(base64url.decode(token.split('.')[1]!))) as JWTPayload;

describe('preview_purchase_order / create_purchase_order through the guard pipeline', () => {
  it('the preview computes the order and changes nothing', async () => {
    h = patternHarness();
    const p = await preview();
    expect(p).toMatchObject({
      supplier_id: 'SUP-1',
      lines: [{ sku: 'SKU-7', quantity: 10, unit_cost: 26, line_total: 260 }],
      subtotal: 260,
      tax: 20.8,
      shipping: 25,
      total: 305.8,
      on_hand_now: 40,
      on_hand_after_delivery: 50,
      requires_approval: false,
      expires_at: '2026-11-30T09:10:00.000Z',
    });
    expect(await h.placed()).toBe(0);
  });

  it('a valid token used once succeeds and places exactly the previewed order', async () => {
    h = patternHarness();
    const p = await preview();
    const { result } = await create(p.preview_token);
    expect(result.outcome).toBe('SUCCESS');
    expect(result.payload).toMatchObject({
      status: 'placed',
      total: p.total,
      lines: p.lines,
      approved_by: null,
    });
    const placed = await h.purchaseOrders.list('t1');
    expect(placed).toHaveLength(1);
    expect(placed[0]).toMatchObject({ total_cents: 30_580, requested_by: 'agent:purchasing' });
  });

  it('the same token replayed by another call is refused and not re-executed (one order)', async () => {
    h = patternHarness();
    const p = await preview();
    expect((await create(p.preview_token, ORDER, buyer, 1)).result.outcome).toBe('SUCCESS');
    const replay = await create(p.preview_token, ORDER, buyer, 2);
    expect(replay.result.outcome).toBe('EXECUTION_ERROR');
    expect(replay.result.error).toMatchObject({ code: 'CALLER_ERROR', retryable: false });
    expect(replay.result.error?.message).toContain('already used');
    expect(await h.placed()).toBe(1);
  });

  it('a redelivery of the very same call is answered from the first result (DUPLICATE), one order', async () => {
    h = patternHarness();
    const p = await preview();
    const call = toolCall('create_purchase_order', { ...ORDER, preview_token: p.preview_token });
    const ctx = ctxFor(buyer);
    const first = await h.run(call, ctx);
    const again = await h.run(call, ctx);
    expect(first.result.outcome).toBe('SUCCESS');
    expect(again.result.outcome).toBe('DUPLICATE');
    expect(again.result.payload).toEqual(first.result.payload);
    expect(await h.placed()).toBe(1);
  });

  it('arguments differing from the previewed ones are refused, and the token stays good for the right ones', async () => {
    h = patternHarness();
    const p = await preview();
    const wrong = await create(p.preview_token, { ...ORDER, quantity: 11 }, buyer, 1);
    expect(wrong.result.error?.message).toContain('differ from the ones that were previewed');
    expect(await h.placed()).toBe(0);
    expect((await create(p.preview_token, ORDER, buyer, 2)).result.outcome).toBe('SUCCESS');
    expect(await h.placed()).toBe(1);
  });

  it.each<RefusedConfirm>([
    {
      title: 'an expired token is refused with a clear reason naming when it expired',
      before: () => h.clock.advance(10 * 60_000),
      refused: {
        outcome: 'EXECUTION_ERROR',
        error: {
          message:
            'The preview_token expired at 2026-11-30T09:10:00.000Z; previews are valid for a limited time.',
          suggestedFix: expect.stringContaining('preview_purchase_order'),
        },
      },
    },
    {
      title: 'a token with one payload byte flipped is refused by the signature check',
      token: (token) => {
        const [head, payload, sig] = token.split('.') as [string, string, string];
        return `${head}.${payload.slice(0, 20)}${payload[20] === 'A' ? 'B' : 'A'}${payload.slice(21)}.${sig}`;
      },
      refused: {
        outcome: 'EXECUTION_ERROR',
        error: { message: expect.stringContaining('failed its signature check') },
      },
    },
    {
      title: 'a token re-signed with another key for a bigger quantity is refused',
      token: (token) =>
        new SignJWT({ ...payloadOf(token), args: argumentsHash({ ...ORDER, quantity: 500 }) })
          .setProtectedHeader({ alg: 'HS256', typ: PREVIEW_TOKEN_TYPE })
          .sign(randomBytes(32)),
      args: { ...ORDER, quantity: 500 },
      refused: {
        outcome: 'EXECUTION_ERROR',
        error: { message: expect.stringContaining('failed its signature check') },
      },
    },
    {
      title: 'stock changed since the preview: refused, nothing placed',
      before: async () => {
        const moved = await h.run(
          toolCall('update_inventory', { sku: 'SKU-7', delta: -2, reason: 'damaged' }),
          ctxFor(buyer),
        );
        expect(moved.result.outcome).toBe('SUCCESS');
      },
      refused: {
        outcome: 'EXECUTION_ERROR',
        error: { message: expect.stringContaining('The resource changed since the preview') },
      },
    },
    {
      title: "the supplier's price changed since the preview: refused, nothing placed",
      before: () => h.purchaseOrders.setPrice('t1', 'SUP-1', 'SKU-7', 2_900),
      refused: { error: { message: expect.stringContaining('differs from what was previewed') } },
    },
    {
      title: 'the policy version changed since the preview: refused',
      before: () => h.setPolicyVersion('store-p2'),
      refused: { error: { message: expect.stringContaining('business rules changed') } },
    },
    {
      title: 'another principal (the same agent acting for another user) cannot use the token',
      principal: otherBuyer,
      refused: { outcome: 'UNAUTHORIZED', error: { message: 'This preview_token was not issued to you.' } },
    },
    {
      title: 'a principal without a purchasing role is refused before the tool runs',
      principal: support,
      refused: { outcome: 'UNAUTHORIZED', toolInvocations: 0 },
    },
  ])(
    '$title',
    async ({ previewed = ORDER, before, token = (t) => t, args = ORDER, principal = buyer, refused }) => {
      h = patternHarness();
      const p = await preview(previewed);
      await before?.(p);
      const { result } = await create(await token(p.preview_token), args, principal);
      expect(result).toMatchObject(refused);
      expect(await h.placed()).toBe(0);
    },
  );

  it('approval required: refused as awaiting approval until a manager approves, then accepted once', async () => {
    h = patternHarness();
    const p = await preview(BIG_ORDER);
    expect(p).toMatchObject({ total: 1_123.2, requires_approval: true });
    const call = toolCall('create_purchase_order', { ...BIG_ORDER, preview_token: p.preview_token });
    const ctx = ctxFor(buyer);

    const waiting = await h.run(call, ctx);
    expect(waiting.result.outcome).toBe('POLICY_VIOLATION');
    expect(waiting.result.error?.message).toContain('awaiting approval');
    expect(waiting.result.error?.message).toContain(p.preview_id);
    expect(waiting.result.error?.retryable).toBe(true);
    expect(await h.placed()).toBe(0);

    const request = await h.approvals.get(p.preview_id);
    expect(request).toMatchObject({
      state: 'pending',
      requester: buyer.id,
      onBehalfOf: buyer.onBehalfOf,
      arguments: BIG_ORDER,
      rule: {
        rule: 'purchase-order-total',
        reason: "orders above $1,000 need a manager's approval; this order totals $1,123.20",
        approvers: 1,
      },
    });
    // Four eyes: neither the agent nor the user it acts for may approve.
    expect(await h.approvals.approve(p.preview_id, buyer.id, 'mine')).toMatchObject({ refusal: 'requester' });
    expect(await h.approvals.approve(p.preview_id, `operator:${buyer.onBehalfOf!}`, 'mine')).toMatchObject({
      refusal: 'on-behalf-of',
    });
    expect((await h.run(call, ctx)).result.outcome).toBe('POLICY_VIOLATION');
    expect(await h.placed()).toBe(0);

    expect((await h.approvals.approve(p.preview_id, 'operator:M-1', 'restock')).ok).toBe(true);
    const approved = await h.run(call, ctx);
    expect(approved.result.outcome).toBe('SUCCESS');
    expect(approved.result.payload).toMatchObject({ approved_by: 'M-1', total: 1_123.2 });

    const replay = await create(p.preview_token, BIG_ORDER, buyer, 7);
    expect(replay.result.error?.message).toContain('already used');
    expect(await h.placed()).toBe(1);
  });

  it('the confirm accepts only the token plus the previewed fields', async () => {
    h = patternHarness();
    const p = await preview();
    const { result } = await h.run(
      toolCall('create_purchase_order', { ...ORDER, preview_token: p.preview_token, unit_cost: 0.01 }),
      ctxFor(buyer),
    );
    expect(result.outcome).toBe('SCHEMA_INVALID');
    expect(result.toolInvocations).toBe(0);
    const missing = await h.run(toolCall('create_purchase_order', ORDER), ctxFor(buyer));
    expect(missing.result.outcome).toBe('SCHEMA_INVALID');
    expect(await h.placed()).toBe(0);
  });

  it('the confirm travels on the same partition as other writes to the SKU, and its token is not audited', async () => {
    h = patternHarness();
    const p = await preview();
    const keyOf = (name: string, args: Record<string, unknown>) => {
      const resolved = h.registry.resolve(name, { tenant: 't1' });
      if (!resolved.ok) throw resolved.error;
      return resolved.tool.conflictKey!(args, ctxFor(buyer));
    };
    const confirmKey = keyOf('create_purchase_order', { ...ORDER, preview_token: p.preview_token });
    expect(confirmKey).toBe('t1:inventory:SKU-7');
    expect(confirmKey).toBe(keyOf('update_inventory', { sku: 'SKU-7', delta: 1, reason: 'received' }));
    expect(confirmKey).toBe(keyOf('preview_purchase_order', ORDER));
    const { audit } = await h.run(
      toolCall('create_purchase_order', { ...ORDER, preview_token: p.preview_token }),
      ctxFor(buyer),
    );
    expect(audit.arguments).toMatchObject({ ...ORDER, preview_token: REDACTED });
  });
});

import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { MemoryApprovalStore } from '../../libs/adapters/memory/approval-store.js';
import { PostgresApprovalStore } from '../../libs/adapters/postgres/approval-store.js';
import { migrate } from '../../libs/adapters/postgres/migrate.js';
import { ManualClock } from '../../libs/core/manual-clock.js';
import type { ApprovalDraft, ApprovalStore } from '../../libs/ports/approval-store.js';
import { DATABASE_URL } from '../helpers/env.js';
import { createTestSchema } from '../helpers/postgres.js';
import { openForSuite } from '../helpers/stack-lifecycle.js';

/**
 * The ApprovalStore contract, the same for every adapter. Both run on a manual clock (the Postgres
 * adapter takes the writer's clock, as the preview token's expiry is on it), and the peer is a second
 * client of the same backing store (a second pool for Postgres), as another executor or console would be.
 */
interface ApprovalHarness {
  readonly subject: ApprovalStore;
  readonly peer: ApprovalStore;
  readonly clock: ManualClock;
  close(): Promise<void>;
}

const T0 = 1_800_000_000_000;

const adapters: { name: string; create(): Promise<ApprovalHarness> }[] = [
  {
    name: 'memory',
    create: () => {
      const clock = new ManualClock(T0);
      const store = new MemoryApprovalStore(clock);
      return Promise.resolve({ subject: store, peer: store, clock, close: async () => undefined });
    },
  },
  {
    name: 'postgres',
    create: async () => {
      const clock = new ManualClock(T0);
      const test = await createTestSchema('approvals');
      await migrate(test.pool);
      const second = new pg.Pool({
        connectionString: DATABASE_URL,
        max: 10,
        options: `-c search_path="${test.schema}"`,
      });
      return {
        subject: new PostgresApprovalStore(test.pool, clock),
        peer: new PostgresApprovalStore(second, clock),
        clock,
        async close() {
          await second.end();
          await test.drop();
        },
      };
    },
  },
];

const draft = (over: Partial<ApprovalDraft> = {}): ApprovalDraft => ({
  id: `jti-${randomUUID()}`,
  tenant: 't1',
  tool: 'create_purchase_order',
  toolVersion: '1.0.0',
  arguments: { sku: 'SKU-21', quantity: 300, supplier_id: 'SUP-2' },
  argumentsHash: 'c'.repeat(64),
  requester: 'warehouse-bot:2',
  onBehalfOf: 'W-2',
  rule: {
    rule: 'purchase-order-total',
    reason: "orders above $1,000 need a manager's approval",
    approvers: 1,
  },
  expiresAtMs: T0 + 600_000,
  origin: { traceId: 'd'.repeat(32), taskId: 'task-1', step: 1, index: 0 },
  ...over,
});

/** The creation batch (of five) an id was made in: ids of one batch share a creation time. */
const orderOf = (id: string, ids: readonly string[]): number => Math.floor((ids.indexOf(id) * 2) / 5);

describe.each(adapters)('ApprovalStore contract: $name', (adapter) => {
  let h: ApprovalHarness;
  openForSuite(async () => (h = await adapter.create()));

  it('records a pending request with everything the gate gave; every client reads it back', async () => {
    const d = draft();
    const { request, created } = await h.subject.create(d);
    expect(created).toBe(true);
    expect(request).toMatchObject({ ...d, state: 'pending', version: 1, approvals: [] });
    expect(request.createdAtMs).toBe(h.clock.now());
    expect(await h.peer.get(d.id)).toEqual(request);
    expect(await h.peer.events(d.id)).toEqual([
      {
        id: d.id,
        version: 1,
        from: 'new',
        to: 'pending',
        by: 'warehouse-bot:2',
        note: d.rule.reason,
        atMs: T0,
      },
    ]);
    expect(await h.subject.get(`jti-${randomUUID()}`)).toBeUndefined();
  });

  it('creating again is idempotent by id and never alters the existing request', async () => {
    const d = draft();
    const { request } = await h.subject.create(d);
    const again = await h.peer.create({
      ...d,
      requester: 'forger',
      arguments: { sku: 'SKU-1', quantity: 1, supplier_id: 'SUP-1' },
      rule: { ...d.rule, approvers: 1, reason: 'nothing to see' },
    });
    expect(again).toEqual({ request, created: false });
    expect(await h.subject.events(d.id)).toHaveLength(1);
  });

  it('concurrent creates of one id make exactly one request', async () => {
    const d = draft();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? h.subject : h.peer).create(d)),
    );
    expect(answers.filter((a) => a.created)).toHaveLength(1);
    expect(await h.subject.events(d.id)).toHaveLength(1);
  });

  it('one distinct approver makes it approved; the event names the person in canonical form', async () => {
    const d = draft();
    await h.subject.create(d);
    const change = await h.peer.approve(d.id, 'operator:mia', 'restock before the weekend');
    expect(change).toMatchObject({ ok: true, request: { state: 'approved', version: 2 } });
    expect(change.ok && change.request.approvals).toEqual([
      { by: 'mia', note: 'restock before the weekend', atMs: T0 },
    ]);
    expect((await h.subject.events(d.id)).at(-1)).toEqual({
      id: d.id,
      version: 2,
      from: 'pending',
      to: 'approved',
      by: 'mia',
      note: 'restock before the weekend',
      atMs: T0,
    });
  });

  it('four eyes: the requester and the user it acts for are refused in any spelling; nothing changes', async () => {
    const d = draft();
    const { request } = await h.subject.create(d);
    for (const [by, refusal] of [
      ['warehouse-bot:2', 'requester'],
      ['operator:warehouse-bot:2', 'requester'],
      ['W-2', 'on-behalf-of'],
      ['operator:W-2', 'on-behalf-of'],
      ['  W-2 ', 'on-behalf-of'],
    ] as const) {
      expect(await h.subject.approve(d.id, by, 'mine')).toMatchObject({ ok: false, refusal });
    }
    expect(await h.peer.get(d.id)).toEqual(request);
    expect(await h.subject.approve(`jti-${randomUUID()}`, 'mia', 'x')).toEqual({
      ok: false,
      refusal: 'unknown',
    });
  });

  it('a rule of two approvers needs two different people', async () => {
    const d = draft({
      rule: { rule: 'purchase-order-total', reason: 'above $10,000: two people', approvers: 2 },
    });
    await h.subject.create(d);
    expect(await h.subject.approve(d.id, 'mia', 'ok')).toMatchObject({
      ok: true,
      request: { state: 'pending' },
    });
    expect(await h.peer.approve(d.id, 'operator:mia', 'again')).toMatchObject({
      ok: false,
      refusal: 'already-approved-by-you',
    });
    expect(await h.subject.redeem(d.id, 'call-1')).toMatchObject({ ok: false, refusal: 'not-approved' });
    expect(await h.peer.approve(d.id, 'noah', 'ok')).toMatchObject({
      ok: true,
      request: { state: 'approved' },
    });
    expect((await h.subject.get(d.id))?.approvals.map((a) => a.by)).toEqual(['mia', 'noah']);
  });

  it('a rejection is final: no approval, no redemption', async () => {
    const d = draft();
    await h.subject.create(d);
    expect(await h.subject.reject(d.id, 'operator:noah', 'supplier on hold')).toMatchObject({
      ok: true,
      request: { state: 'rejected', rejection: { by: 'noah', note: 'supplier on hold' } },
    });
    expect(await h.peer.approve(d.id, 'mia', 'ok')).toMatchObject({ ok: false, refusal: 'not-pending' });
    expect(await h.peer.reject(d.id, 'mia', 'again')).toMatchObject({ ok: false, refusal: 'not-pending' });
    expect(await h.subject.redeem(d.id, 'call-1')).toMatchObject({ ok: false, refusal: 'not-approved' });
  });

  it('redeemed once: the same holder again is answered ok without a new event; another holder is refused', async () => {
    const d = draft();
    await h.subject.create(d);
    await h.subject.approve(d.id, 'mia', 'ok');
    expect(await h.peer.redeem(d.id, 'call-1')).toMatchObject({
      ok: true,
      request: { state: 'redeemed', redeemedBy: 'call-1' },
    });
    expect(await h.subject.redeem(d.id, 'call-1')).toMatchObject({
      ok: true,
      request: { state: 'redeemed' },
    });
    expect(await h.subject.redeem(d.id, 'call-2')).toMatchObject({
      ok: false,
      refusal: 'redeemed-by-another-call',
    });
    expect((await h.subject.events(d.id)).map((e) => e.to)).toEqual(['pending', 'approved', 'redeemed']);
  });

  it('past its expiry a pending or approved request reads as expired and cannot move', async () => {
    const pending = draft({ expiresAtMs: h.clock.now() + 1_000 });
    const approved = draft({ expiresAtMs: h.clock.now() + 1_000 });
    await h.subject.create(pending);
    await h.subject.create(approved);
    await h.subject.approve(approved.id, 'mia', 'ok');
    await h.clock.advance(1_000);
    expect((await h.peer.get(pending.id))?.state).toBe('expired');
    expect((await h.peer.get(approved.id))?.state).toBe('expired');
    expect(await h.subject.approve(pending.id, 'mia', 'late')).toMatchObject({
      ok: false,
      refusal: 'expired',
    });
    expect(await h.subject.reject(pending.id, 'mia', 'late')).toMatchObject({
      ok: false,
      refusal: 'expired',
    });
    expect(await h.subject.redeem(approved.id, 'call-1')).toMatchObject({ ok: false, refusal: 'expired' });
  });

  it('of 40 concurrent approvals and rejections on two clients, exactly one decides', async () => {
    for (let round = 0; round < 5; round++) {
      const d = draft();
      await h.subject.create(d);
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const store = i % 2 === 0 ? h.subject : h.peer;
          return i % 3 === 0 ? store.reject(d.id, `p-${i}`, 'no') : store.approve(d.id, `p-${i}`, 'yes');
        }),
      );
      expect(answers.filter((a) => a.ok)).toHaveLength(1);
      expect(answers.filter((a) => !a.ok).every((a) => !a.ok && a.refusal === 'not-pending')).toBe(true);
      expect(await h.subject.events(d.id)).toHaveLength(2);
    }
  });

  it('of 20 concurrent redeems by different calls, exactly one wins', async () => {
    const d = draft();
    await h.subject.create(d);
    await h.subject.approve(d.id, 'mia', 'ok');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? h.subject : h.peer).redeem(d.id, `call-${i}`)),
    );
    expect(answers.filter((a) => a.ok)).toHaveLength(1);
    expect((await h.subject.events(d.id)).filter((e) => e.to === 'redeemed')).toHaveLength(1);
  });

  it('lists in creation order, keyset-paged, filtered by tenant scope and state, with counts per state', async () => {
    const tenants = [`ta-${randomUUID()}`, `tb-${randomUUID()}`];
    const made: string[][] = [[], []];
    for (let i = 0; i < 25; i++) {
      const d = draft({ tenant: tenants[i % 2]! });
      await h.subject.create(d);
      made[i % 2]!.push(d.id);
      if (i % 5 === 4) await h.clock.advance(1);
    }
    await h.subject.reject(made[0]![0]!, 'mia', 'no');
    const scope = { all: false, tenants: [tenants[0]!] } as const;
    const seen: string[] = [];
    let after: string | undefined;
    do {
      const page = await h.peer.list({
        scope,
        state: 'pending',
        limit: 4,
        ...(after === undefined ? {} : { after }),
      });
      expect(page.items.length).toBeLessThanOrEqual(4);
      for (const r of page.items) expect(r.tenant).toBe(tenants[0]);
      seen.push(...page.items.map((r) => r.id));
      after = page.next;
    } while (after !== undefined);
    // Creation order, ties by id; every pending request exactly once.
    expect(seen).toEqual(
      [...made[0]!.slice(1)].sort((a, b) => orderOf(a, made[0]!) - orderOf(b, made[0]!) || (a < b ? -1 : 1)),
    );
    expect(new Set(seen).size).toBe(12);
    const counts = await h.subject.counts(scope);
    expect(counts).toEqual({ pending: 12, approved: 0, rejected: 1, expired: 0, redeemed: 0 });
    const both = await h.subject.counts({ all: false, tenants });
    expect(both.pending + both.rejected).toBe(25);
    expect((await h.subject.list({ scope: { all: false, tenants: [] } })).items).toEqual([]);
    await expect(h.subject.list({ scope, after: 'not-a-position' })).rejects.toThrow(RangeError);
    await expect(h.subject.list({ scope, limit: 0 })).rejects.toThrow(RangeError);
  });

  it('refuses a draft no gate would record', async () => {
    await expect(h.subject.create(draft({ requester: '' }))).rejects.toThrow(RangeError);
    await expect(
      h.subject.create(draft({ rule: { rule: 'r', reason: 'why', approvers: 0 } })),
    ).rejects.toThrow(RangeError);
  });
});

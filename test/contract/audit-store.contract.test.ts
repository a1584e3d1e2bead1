import { describe, expect, it } from 'vitest';
import { MemoryAuditStore } from '../../libs/adapters/memory/audit-store.js';
import { PostgresAuditStore } from '../../libs/adapters/postgres/audit-store.js';
import { GENESIS_HASH } from '../../libs/audit/hash-chain.js';
import { ToolgateError } from '../../libs/core/errors.js';
import type { AuditEnvelope, AuditStore, StoredAuditRecord } from '../../libs/ports/audit-store.js';
import { uniqueName } from '../helpers/names.js';
import { openForSuite } from '../helpers/stack-lifecycle.js';
import { auditRecord, envelope, refusedRecord } from '../unit/audit/fixtures.js';
import { memoryHarness, postgresHarness, type AdapterCase, type Harness } from './store-harnesses.js';

const adapters: AdapterCase<AuditStore>[] = [
  { name: 'memory', create: () => Promise.resolve(memoryHarness(() => new MemoryAuditStore())) },
  {
    name: 'postgres',
    create: () =>
      postgresHarness(
        // Small pages and insert batches, so paging and batching are exercised by small tests.
        (pool) => new PostgresAuditStore(pool, { insertBatch: 7, verifyPageSize: 5 }),
        'audit',
        5,
      ),
  },
];

/** Every test writes to tenants of its own, so tests share a store without seeing each other. */
const tenant = (): string => uniqueName('tenant');

describe.each(adapters)('AuditStore contract: $name', (adapter) => {
  let h: Harness<AuditStore>;
  openForSuite(async () => (h = await adapter.create()));

  it('appends in order, numbering each tenant chain from 1 and linking every hash', async () => {
    const t = tenant();
    const envs = Array.from({ length: 12 }, (_, i) =>
      envelope(auditRecord({ tenant: t }), { recordedAtMs: 1_000 + i }),
    );
    expect(await h.subject.append(envs)).toEqual({ appended: 12, duplicates: 0 });
    const rows = await h.subject.query({ tenant: t });
    expect(rows.map((r) => r.recordId)).toEqual(envs.map((e) => e.recordId));
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(rows[0]!.prevHash).toBe(GENESIS_HASH);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.prevHash).toBe(rows[i - 1]!.hash);
    expect(rows.every((r) => r.chain === t)).toBe(true);
    expect(await h.subject.verify({ chain: t })).toEqual({
      ok: true,
      checked: 12,
      heads: { [t]: { seq: 12, hash: rows[11]!.hash } },
    });
  });

  it('returns records exactly as appended', async () => {
    const t = tenant();
    const env = envelope(
      refusedRecord({
        tenant: t,
        result: { nested: [1, 'two', null, { x: true }] },
        policy: {
          version: 'refunds-2026-03-01',
          roles: ['support'],
          facts: { refunded_on_order: '99.98', refunds_today: '3' },
          shadow: { version: 'refunds-2026-04-01', decision: 'refuse', ruleId: 'refund-cap-per-order' },
        },
      }),
    );
    await h.subject.append([env]);
    const [row] = await h.subject.query({ tenant: t });
    expect(row).toMatchObject({ ...env, chain: t, seq: 1 });
    expect(row!.record).toEqual(env.record);
    expect(await h.subject.verify({ chain: t })).toMatchObject({ ok: true, checked: 1 });
  });

  it('is idempotent by recordId: a redelivered batch, and repeats within a batch, are stored once', async () => {
    const t = tenant();
    const envs = Array.from({ length: 5 }, () => envelope(auditRecord({ tenant: t })));
    expect(await h.subject.append(envs)).toEqual({ appended: 5, duplicates: 0 });
    expect(await h.subject.append(envs)).toEqual({ appended: 0, duplicates: 5 });
    const extra = envelope(auditRecord({ tenant: t }));
    expect(await h.subject.append([envs[0]!, extra, extra, envs[4]!])).toEqual({
      appended: 1,
      duplicates: 3,
    });
    // First stored version wins: a different record under a known recordId is not stored.
    const impostor = { ...envs[1]!, record: { ...envs[1]!.record, principalId: 'impostor' } };
    expect(await h.subject.append([impostor])).toEqual({ appended: 0, duplicates: 1 });
    const rows = await h.subject.query({ tenant: t });
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(rows.some((r) => r.record.principalId === 'impostor')).toBe(false);
    expect(await h.subject.verify({ chain: t })).toMatchObject({ ok: true, checked: 6 });
  });

  it('keeps one chain per tenant, and a batch may span tenants', async () => {
    const [a, b] = [tenant(), tenant()];
    const batch = [a, b, b, a, b].map((t) => envelope(auditRecord({ tenant: t })));
    expect(await h.subject.append(batch)).toEqual({ appended: 5, duplicates: 0 });
    expect((await h.subject.query({ tenant: a })).map((r) => r.seq)).toEqual([1, 2]);
    expect((await h.subject.query({ tenant: b })).map((r) => r.seq)).toEqual([1, 2, 3]);
    const report = await h.subject.verify();
    expect(report.ok).toBe(true);
    if (report.ok) expect(Object.keys(report.heads)).toEqual(expect.arrayContaining([a, b]));
  });

  it('refuses a batch with a malformed record before writing any of it', async () => {
    const t = tenant();
    const good = envelope(auditRecord({ tenant: t }));
    const bad = envelope(auditRecord({ tenant: t }), { recordId: '' });
    await expect(h.subject.append([good, bad])).rejects.toMatchObject({ code: 'MALFORMED_EVENT' });
    const notJson = envelope(auditRecord({ tenant: t, result: { at: new Date(0) } }));
    await expect(h.subject.append([good, notJson])).rejects.toBeInstanceOf(ToolgateError);
    expect(await h.subject.query({ tenant: t })).toEqual([]);
  });

  it('stores strings PostgreSQL cannot hold as U+FFFD, and odd numbers exactly; the chain still verifies', async () => {
    const t = tenant();
    const env = envelope(
      auditRecord({
        tenant: t,
        arguments: { nul: 'a\u0000b', lone: 'x\uD800', 'key\u0000': 1, emoji: '😀', accents: 'é' },
        result: {
          big: 1e21,
          tiny: 5e-324,
          sum: 0.1 + 0.2,
          negZero: -0,
          max: Number.MAX_SAFE_INTEGER,
          neg: -12.5,
        },
      }),
    );
    expect(await h.subject.append([env])).toEqual({ appended: 1, duplicates: 0 });
    const [row] = await h.subject.query({ tenant: t });
    expect(row!.record.arguments).toEqual({
      nul: 'a\uFFFDb',
      lone: 'x\uFFFD',
      'key\uFFFD': 1,
      emoji: '😀',
      accents: 'é',
    });
    expect(row!.record.result).toEqual({
      big: 1e21,
      tiny: 5e-324,
      sum: 0.1 + 0.2,
      negZero: 0,
      max: Number.MAX_SAFE_INTEGER,
      neg: -12.5,
    });
    expect(await h.subject.verify({ chain: t })).toMatchObject({ ok: true, checked: 1 });
    // Redelivering the original (uncleaned) envelope is still recognised as a duplicate.
    expect(await h.subject.append([env])).toEqual({ appended: 0, duplicates: 1 });
  });

  it('filters on every field, with [fromMs, toMs), a limit and both orders', async () => {
    const t = tenant();
    const trace = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    const envs = [
      envelope(auditRecord({ tenant: t, principalId: 'p1', tool: 'refund_payment' }), { recordedAtMs: 100 }),
      envelope(refusedRecord({ tenant: t, principalId: 'p2', traceId: trace }), { recordedAtMs: 200 }),
      envelope(auditRecord({ tenant: t, tool: 'get_order', resourceKey: `${t}:order:O-1` }), {
        recordedAtMs: 300,
      }),
      envelope(auditRecord({ tenant: t, outcome: 'UNRESOLVED', errorCode: 'UNRESOLVED' }), {
        recordedAtMs: 400,
      }),
    ];
    await h.subject.append(envs);
    const ids = (rows: StoredAuditRecord[]): string[] => rows.map((r) => r.recordId);
    const id = (i: number): string => envs[i]!.recordId;
    expect(ids(await h.subject.query({ tenant: t, principalId: 'p2' }))).toEqual([id(1)]);
    expect(ids(await h.subject.query({ tenant: t, tool: 'get_order' }))).toEqual([id(2)]);
    expect(ids(await h.subject.query({ resourceKey: `${t}:order:O-1` }))).toEqual([id(2)]);
    expect(ids(await h.subject.query({ tenant: t, traceId: trace }))).toEqual([id(1)]);
    expect(ids(await h.subject.query({ callId: envs[3]!.record.callId }))).toEqual([id(3)]);
    expect(ids(await h.subject.query({ tenant: t, outcome: 'UNRESOLVED' }))).toEqual([id(3)]);
    expect(ids(await h.subject.query({ tenant: t, fromMs: 200, toMs: 400 }))).toEqual([id(1), id(2)]);
    expect(ids(await h.subject.query({ tenant: t, fromMs: 199.5, toMs: 300.5 }))).toEqual([id(1), id(2)]);
    expect(ids(await h.subject.query({ tenant: t, limit: 2 }))).toEqual([id(0), id(1)]);
    expect(ids(await h.subject.query({ tenant: t, order: 'desc', limit: 3 }))).toEqual([id(3), id(2), id(1)]);
    expect(ids(await h.subject.query({ tenant: t, limit: 2, offset: 2 }))).toEqual([id(2), id(3)]);
    expect(ids(await h.subject.query({ tenant: t, order: 'desc', limit: 2, offset: 3 }))).toEqual([id(0)]);
    await expect(h.subject.query({ tenant: t, offset: Infinity })).rejects.toBeInstanceOf(ToolgateError);
    expect(await h.subject.query({ tenant: t, principalId: 'p1', outcome: 'UNAUTHORIZED' })).toEqual([]);
    await expect(h.subject.query({ tenant: t, fromMs: NaN })).rejects.toBeInstanceOf(ToolgateError);
  });

  it('filters by a list of tenants (a scope) in query and whoDid, the limit applied after it', async () => {
    const [a, b, c] = [tenant(), tenant(), tenant()];
    const envs = [a, b, c, a, b, c].map((t, i) =>
      envelope(auditRecord({ tenant: t, resourceKey: `${t}:order:O-1` }), { recordedAtMs: 100 + i }),
    );
    await h.subject.append(envs);
    const ids = (rows: StoredAuditRecord[]): string[] => rows.map((r) => r.recordId);
    const of = (...ts: string[]) => envs.filter((e) => ts.includes(e.record.tenant)).map((e) => e.recordId);
    expect(ids(await h.subject.query({ tenants: [a, c], fromMs: 100, toMs: 106 }))).toEqual(of(a, c));
    expect(ids(await h.subject.query({ tenants: [a, c], fromMs: 100, toMs: 106, limit: 2 }))).toEqual(
      of(a, c).slice(0, 2),
    );
    expect(ids(await h.subject.query({ tenants: [b], tenant: b }))).toEqual(of(b));
    expect(await h.subject.query({ tenants: [b], tenant: a })).toEqual([]);
    expect(await h.subject.query({ tenants: [], fromMs: 100, toMs: 106 })).toEqual([]);
    const who = await h.subject.whoDid(`${a}:order:O-1`, { tenants: [b, c] });
    expect(who).toEqual({ did: [], tried: [] });
    expect((await h.subject.whoDid(`${a}:order:O-1`, { tenants: [a] })).did).toHaveLength(2);
  });

  it('filters by source: the executor, the reconciler, or a person (operator)', async () => {
    const t = tenant();
    const envs = [
      envelope(auditRecord({ tenant: t }), { recordedAtMs: 100 }),
      envelope(auditRecord({ tenant: t, principalId: 'operator:ann' }), {
        recordedAtMs: 200,
        source: 'operator',
        producerId: 'operator:ann',
      }),
      envelope(auditRecord({ tenant: t }), { recordedAtMs: 300, source: 'reconciler' }),
    ];
    await h.subject.append(envs);
    const ids = (rows: StoredAuditRecord[]): string[] => rows.map((r) => r.recordId);
    expect(ids(await h.subject.query({ tenant: t, source: 'operator' }))).toEqual([envs[1]!.recordId]);
    expect(ids(await h.subject.query({ tenant: t, source: 'reconciler' }))).toEqual([envs[2]!.recordId]);
    expect(ids(await h.subject.query({ tenant: t, source: 'executor' }))).toEqual([envs[0]!.recordId]);
    expect(
      ids(await h.subject.query({ tenant: t, source: 'operator', principalId: 'operator:ann' })),
    ).toEqual([envs[1]!.recordId]);
    expect(await h.subject.query({ tenant: t, source: 'executor', principalId: 'operator:ann' })).toEqual([]);
  });

  it('answers "who refunded O-5512, and who tried to?" in one call', async () => {
    const t = tenant();
    const key = `${t}:order:O-5512`;
    const envs = [
      envelope(refusedRecord({ tenant: t, resourceKey: key, principalId: 'mallory' }), { recordedAtMs: 10 }),
      envelope(auditRecord({ tenant: t, resourceKey: key, principalId: 'alice' }), { recordedAtMs: 20 }),
      envelope(auditRecord({ tenant: t, resourceKey: key, principalId: 'alice', outcome: 'DUPLICATE' }), {
        recordedAtMs: 30,
      }),
      envelope(
        auditRecord({
          tenant: t,
          resourceKey: key,
          principalId: 'bob',
          outcome: 'POLICY_VIOLATION',
          errorCode: 'POLICY_VIOLATION',
          decisions: [
            { stage: 'authorize', decision: 'pass', durationMs: 0 },
            { stage: 'business-rules', decision: 'refuse', reason: 'refund above 500', durationMs: 0 },
          ],
        }),
        { recordedAtMs: 40 },
      ),
      // Other resources and other tools on the same id are not part of the answer.
      envelope(auditRecord({ tenant: t, resourceKey: `${t}:order:O-5513` }), { recordedAtMs: 50 }),
      envelope(auditRecord({ tenant: t, resourceKey: key, tool: 'get_order' }), { recordedAtMs: 60 }),
    ];
    await h.subject.append(envs);
    const byId = await h.subject.whoDid({ tool: 'refund_payment', resource: 'O-5512' }, { tenant: t });
    expect(byId.did).toEqual([
      expect.objectContaining({
        label: 'did',
        principalId: 'alice',
        outcome: 'SUCCESS',
        atMs: 20,
        callId: envs[1]!.record.callId,
      }),
    ]);
    expect(byId.tried).toEqual([
      expect.objectContaining({
        label: 'refused',
        principalId: 'mallory',
        outcome: 'UNAUTHORIZED',
        errorCode: 'UNAUTHORIZED',
        stage: 'authorize',
        reason: 'not permitted',
        atMs: 10,
        traceId: envs[0]!.record.traceId,
        resourceKey: key,
        chain: t,
        seq: 1,
      }),
      expect.objectContaining({ label: 'duplicate', principalId: 'alice', atMs: 30 }),
      expect.objectContaining({
        label: 'refused',
        principalId: 'bob',
        reason: 'refund above 500',
        stage: 'business-rules',
      }),
    ]);
    // By full key: every tool on the resource.
    const byKey = await h.subject.whoDid(key);
    expect([...byKey.did, ...byKey.tried].map((e) => e.atMs).sort((x, y) => x - y)).toEqual([
      10, 20, 30, 40, 60,
    ]);
    expect((await h.subject.whoDid(key, { fromMs: 20, toMs: 40 })).tried.map((e) => e.atMs)).toEqual([30]);
    expect(await h.subject.whoDid(`${t}:order:nothing`)).toEqual({ did: [], tried: [] });
  });

  it('concurrent appends from two clients never fork a chain; re-appending everything adds nothing', async () => {
    const [a, b] = [tenant(), tenant()];
    const envs: AuditEnvelope[] = Array.from({ length: 120 }, (_, i) =>
      envelope(auditRecord({ tenant: i % 2 === 0 ? a : b }), { recordedAtMs: i }),
    );
    const batches: AuditEnvelope[][] = [];
    for (let i = 0; i < envs.length; i += 6) batches.push(envs.slice(i, i + 6));
    const results = await Promise.all(
      batches.map((batch, i) => (i % 2 === 0 ? h.subject : h.peer).append(batch)),
    );
    expect(results.reduce((n, r) => n + r.appended, 0)).toBe(120);
    const again = await Promise.all(
      batches.map((batch, i) => (i % 2 === 0 ? h.peer : h.subject).append(batch)),
    );
    expect(again.reduce((n, r) => n + r.duplicates, 0)).toBe(120);
    for (const t of [a, b]) {
      const rows = await h.subject.query({ tenant: t, limit: 1000 });
      expect(rows.map((r) => r.seq).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 60 }, (_, i) => i + 1),
      );
      expect(await h.subject.verify({ chain: t })).toMatchObject({ ok: true, checked: 60 });
    }
  });

  it("anchors: an ok report's heads verify later; a wrong anchor is reported", async () => {
    const t = tenant();
    await h.subject.append(Array.from({ length: 4 }, () => envelope(auditRecord({ tenant: t }))));
    const first = await h.subject.verify({ chain: t });
    if (!first.ok) throw new Error(first.detail);
    await h.subject.append([envelope(auditRecord({ tenant: t }))]);
    const anchors = [{ chain: t, ...first.heads[t]! }];
    expect(await h.subject.verify({ chain: t, anchors })).toMatchObject({ ok: true, checked: 5 });
    expect(
      await h.subject.verify({ chain: t, anchors: [{ chain: t, seq: 2, hash: 'b'.repeat(64) }] }),
    ).toMatchObject({ ok: false, chain: t, firstBrokenSeq: 2, reason: 'anchor-mismatch' });
    expect(
      await h.subject.verify({ chain: t, anchors: [{ chain: t, seq: 9, hash: 'b'.repeat(64) }] }),
    ).toMatchObject({
      ok: false,
      firstBrokenSeq: 6,
      reason: 'anchor-mismatch',
    });
  });

  it('no caller can change a stored record through a reference', async () => {
    const t = tenant();
    const env = envelope(auditRecord({ tenant: t }));
    const original = structuredClone(env.record);
    await h.subject.append([env]);
    env.record.arguments.order_id = 'changed-after-append';
    const [row] = await h.subject.query({ tenant: t });
    try {
      (row!.record as { principalId: string }).principalId = 'changed-on-result';
    } catch {
      // Frozen results refuse the write; either way the stored record must be unchanged.
    }
    const [again] = await h.subject.query({ tenant: t });
    expect(again!.record).toEqual(original);
    expect(await h.subject.verify({ chain: t })).toMatchObject({ ok: true });
  });
});

import { describe, expect, it } from 'vitest';
import { MemoryCaseStore } from '../../libs/adapters/memory/case-store.js';
import { PostgresCaseStore } from '../../libs/adapters/postgres/case-store.js';
import { ManualClock } from '../../libs/core/manual-clock.js';
import { ToolgateError } from '../../libs/core/errors.js';
import type { CaseChange, CaseStore, ExpectedCase, ReconciliationCase } from '../../libs/ports/case-store.js';
import { uniqueName } from '../helpers/names.js';
import { openForSuite } from '../helpers/stack-lifecycle.js';
import { deadLetter } from '../unit/audit/fixtures.js';
import { postgresHarness } from './store-harnesses.js';

/** The store under test, a second client of the same backing store, and the clock both read. */
interface CaseHarness {
  readonly store: CaseStore;
  readonly peer: CaseStore;
  readonly clock: ManualClock;
  close(): Promise<void>;
}

const START_MS = 1_700_000_000_000;

const adapters: { name: string; create(): Promise<CaseHarness> }[] = [
  {
    name: 'memory',
    create() {
      const clock = new ManualClock(START_MS);
      const store = new MemoryCaseStore(clock);
      return Promise.resolve({ store, peer: store, clock, close: () => Promise.resolve() });
    },
  },
  {
    name: 'postgres',
    async create() {
      const clock = new ManualClock(START_MS);
      const h = await postgresHarness((pool) => new PostgresCaseStore(pool, clock), 'cases', 5);
      return { store: h.subject, peer: h.peer, clock, close: () => h.close() };
    },
  },
];

const OP = 'operator:alice' as const;
const unknownCheck = (atMs: number) => ({ atMs, answer: { state: 'unknown' as const } });
/** The status check's move to `to` after a check at `atMs` answered unknown; `more` adds the rest. */
const afterUnknownCheck = (
  to: CaseChange['to'],
  atMs: number,
  more: Partial<CaseChange> = {},
): CaseChange => ({ to, by: 'status-check', note: '', statusCheck: unknownCheck(atMs), ...more });

describe.each(adapters)('CaseStore contract: $name', (adapter) => {
  let h: CaseHarness;
  openForSuite(async () => (h = await adapter.create()));

  /** `n` transitions of `caseId` at once, alternating between the two clients; `change(i)` is the i-th. */
  const concurrently = (
    n: number,
    caseId: string,
    change: (i: number) => CaseChange,
    expected: ExpectedCase,
  ) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        (i % 2 === 0 ? h.store : h.peer).transition(caseId, change(i), expected),
      ),
    );

  it('opens a case from a dead letter, due for a check now, with its full context', async () => {
    const dl = deadLetter();
    const opened = await h.store.openFromDeadLetter(dl);
    expect(opened.created).toBe(true);
    const c = opened.case;
    expect(c).toMatchObject({
      deadLetterId: dl.deadLetterId,
      callId: dl.callId,
      tenant: 't1',
      tool: 'refund_payment',
      idempotencyKey: dl.idempotencyKey,
      resourceKey: dl.resourceKey,
      principalId: dl.principalId,
      traceId: dl.traceId,
      reason: 'UNRESOLVED',
      state: 'open',
      nextCheckAtMs: h.clock.now(),
      createdAtMs: h.clock.now(),
      updatedAtMs: h.clock.now(),
      version: 1,
      statusChecks: [],
      history: [],
      resolution: null,
      lastKnownState: { status: 'submitted' },
      attemptHistory: [{ attempt: 1, startedAtMs: 1_000, durationMs: 30_000, result: 'TIMEOUT' }],
    });
    expect(c.context).toMatchObject({
      request: { tool: 'refund_payment', arguments: { order_id: 'O-5512' } },
      errorCode: 'TIMEOUT',
      originalPartition: 3,
      originalOffset: '42',
    });
    expect(await h.store.get(c.caseId)).toEqual(c);
    expect(await h.store.get({ callId: dl.callId! })).toEqual(c);
    expect(await h.store.get({ deadLetterId: dl.deadLetterId })).toEqual(c);
    expect(await h.store.get('no-such-case')).toBeUndefined();
    expect(await h.store.get({ callId: 'no-such-call' })).toBeUndefined();
  });

  it('is idempotent by call id: redelivery, or another dead letter for the same call, opens nothing new', async () => {
    const dl = deadLetter();
    const first = await h.store.openFromDeadLetter(dl);
    await h.clock.advance(1_000);
    const again = await h.peer.openFromDeadLetter(dl);
    expect(again).toEqual({ created: false, case: first.case });
    const second = deadLetter({ callId: dl.callId, reason: 'EXHAUSTED' });
    expect(await h.store.openFromDeadLetter(second)).toEqual({ created: false, case: first.case });
    // Even after resolution a late redelivery does not reopen anything.
    await h.store.transition(
      first.case.caseId,
      { to: 'resolved_failed', by: OP, note: 'no refund exists' },
      'open',
    );
    const late = await h.store.openFromDeadLetter(dl);
    expect(late.created).toBe(false);
    expect(late.case.state).toBe('resolved_failed');
  });

  it('poison without a call id is deduplicated by dead-letter id', async () => {
    const poison = deadLetter({
      callId: null,
      reason: 'POISON',
      tenant: null,
      tool: null,
      rawPayloadBase64: 'AAEC',
    });
    const a = await h.store.openFromDeadLetter(poison);
    const b = await h.store.openFromDeadLetter(poison);
    const other = await h.store.openFromDeadLetter({ ...poison, deadLetterId: uniqueName('dl') });
    expect(a.created).toBe(true);
    expect(b).toEqual({ created: false, case: a.case });
    expect(other.created).toBe(true);
    expect(a.case).toMatchObject({ callId: null, tenant: null, reason: 'POISON' });
    expect(a.case.context).toMatchObject({ rawPayloadBase64: 'AAEC' });
  });

  it('refuses a malformed dead letter without storing anything', async () => {
    const dl = deadLetter({ callId: null });
    await expect(h.store.openFromDeadLetter(dl)).rejects.toMatchObject({ code: 'MALFORMED_EVENT' });
    expect(await h.store.get({ deadLetterId: dl.deadLetterId })).toBeUndefined();
  });

  it('exactly one of concurrent openers creates the case', async () => {
    const dl = deadLetter();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? h.store : h.peer).openFromDeadLetter(dl)),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.case.caseId)).size).toBe(1);
  });

  it('walks open → recheck → needs_manual → resolved_succeeded, recording everything', async () => {
    const { case: c } = await h.store.openFromDeadLetter(deadLetter());
    const t0 = h.clock.now();
    await h.clock.advance(60_000);
    const recheck = await h.store.transition(
      c.caseId,
      afterUnknownCheck('open', t0 + 59_000, { nextCheckAtMs: t0 + 120_000 }),
      'open',
    );
    expect(recheck).toMatchObject({
      ok: true,
      case: { state: 'open', version: 2, nextCheckAtMs: t0 + 120_000, updatedAtMs: t0 + 60_000 },
    });
    await h.clock.advance(60_000);
    const escalated = await h.store.transition(
      c.caseId,
      afterUnknownCheck('needs_manual', t0 + 120_000, { note: 'status checks exhausted' }),
      { state: 'open', version: 2 },
    );
    expect(escalated).toMatchObject({
      ok: true,
      case: { state: 'needs_manual', nextCheckAtMs: null, version: 3 },
    });
    const resolved = await h.peer.transition(
      c.caseId,
      { to: 'resolved_succeeded', by: OP, note: 'refund R-77 found in the PSP dashboard' },
      'needs_manual',
    );
    if (!resolved.ok) throw new Error(`expected success, got ${resolved.reason}`);
    expect(resolved.case).toMatchObject({
      state: 'resolved_succeeded',
      version: 4,
      resolution: { by: OP, note: 'refund R-77 found in the PSP dashboard', atMs: t0 + 120_000 },
    });
    expect(resolved.case.statusChecks).toEqual([unknownCheck(t0 + 59_000), unknownCheck(t0 + 120_000)]);
    expect(resolved.case.history.map((x) => [x.from, x.to, x.by])).toEqual([
      ['open', 'open', 'status-check'],
      ['open', 'needs_manual', 'status-check'],
      ['needs_manual', 'resolved_succeeded', OP],
    ]);
    expect(await h.store.get(c.caseId)).toEqual(resolved.case);
  });

  it('redrive: a person re-opens a failed case; the old resolution stays in the history', async () => {
    const { case: c } = await h.store.openFromDeadLetter(deadLetter());
    await h.store.transition(
      c.caseId,
      {
        to: 'resolved_failed',
        by: 'status-check',
        note: '',
        statusCheck: { atMs: 1, answer: { state: 'not-applied' } },
      },
      'open',
    );
    const redriven = await h.store.transition(
      c.caseId,
      { to: 'open', by: OP, note: 'PSP was lagging' },
      'resolved_failed',
    );
    expect(redriven).toMatchObject({
      ok: true,
      case: { state: 'open', resolution: null, nextCheckAtMs: h.clock.now() },
    });
    if (redriven.ok) expect(redriven.case.history.map((x) => x.to)).toEqual(['resolved_failed', 'open']);
  });

  it('refuses moves the model forbids, writing nothing', async () => {
    const { case: c } = await h.store.openFromDeadLetter(deadLetter());
    const refused: [CaseChange, RegExp][] = [
      [{ to: 'resolved_succeeded', by: 'status-check', note: '' }, /applied/],
      [{ to: 'open', by: 'status-check', note: '' }, /nextCheckAtMs/],
      [{ to: 'needs_manual', by: OP, note: '' }, /note/],
    ];
    for (const [change, why] of refused) {
      const r = await h.store.transition(c.caseId, change, 'open');
      expect(r).toMatchObject({ ok: false, reason: 'not-allowed', case: { version: 1 } });
      if (!r.ok && r.reason === 'not-allowed') expect(r.detail).toMatch(why);
    }
    await h.store.transition(
      c.caseId,
      { to: 'resolved_succeeded', by: OP, note: 'confirmed by phone' },
      'open',
    );
    const final = await h.store.transition(
      c.caseId,
      { to: 'open', by: OP, note: 'reopen' },
      'resolved_succeeded',
    );
    expect(final).toMatchObject({ ok: false, reason: 'not-allowed' });
    expect(await h.store.get(c.caseId)).toMatchObject({ state: 'resolved_succeeded', version: 2 });
  });

  it('refuses when the case is not as expected, and reports unknown cases', async () => {
    const { case: c } = await h.store.openFromDeadLetter(deadLetter());
    const change: CaseChange = { to: 'needs_manual', by: OP, note: 'n' };
    expect(await h.store.transition(c.caseId, change, 'needs_manual')).toMatchObject({
      ok: false,
      reason: 'state-changed',
      case: { state: 'open', version: 1 },
    });
    expect(await h.store.transition(c.caseId, change, { state: 'open', version: 7 })).toMatchObject({
      ok: false,
      reason: 'state-changed',
    });
    expect(await h.store.transition('no-such-case', change, 'open')).toEqual({
      ok: false,
      reason: 'not-found',
    });
    expect(await h.store.get(c.caseId)).toEqual(c);
  });

  it('of concurrent transitions from the same state exactly one wins', async () => {
    const { case: c } = await h.store.openFromDeadLetter(deadLetter());
    const results = await concurrently(
      8,
      c.caseId,
      (i) =>
        i % 2 === 0
          ? { to: 'needs_manual', by: 'status-check', note: `checker ${i} gave up` }
          : { to: 'resolved_failed', by: `operator:op${i}`, note: `operator ${i} decided` },
      'open',
    );
    const winners = results.filter((r) => r.ok);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'state-changed')).toBe(true);
    const stored = await h.store.get(c.caseId);
    expect(stored).toEqual((winners[0] as { case: ReconciliationCase }).case);
    expect(stored!.history).toHaveLength(1);
  });

  it('of concurrent rechecks of the same version exactly one is recorded', async () => {
    const { case: c } = await h.store.openFromDeadLetter(deadLetter());
    const results = await concurrently(
      6,
      c.caseId,
      (i) => afterUnknownCheck('open', i, { nextCheckAtMs: h.clock.now() + 1_000 }),
      { state: 'open', version: 1 },
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    const stored = await h.store.get(c.caseId);
    expect(stored).toMatchObject({ version: 2 });
    expect(stored!.statusChecks).toHaveLength(1);
  });

  it('lists by state, tenant and tool, oldest first, and due open cases soonest first', async () => {
    const tenant = uniqueName('tenant');
    const base = h.clock.now();
    const open = async (tool: string): Promise<ReconciliationCase> => {
      const opened = await h.store.openFromDeadLetter(deadLetter({ tenant, tool }));
      await h.clock.advance(10);
      return opened.case;
    };
    const a = await open('refund_payment');
    const b = await open('refund_payment');
    const c = await open('send_email');
    const d = await open('refund_payment');
    // a: checked later; b: escalated (never due); c and d stay due at their creation time.
    await h.store.transition(
      a.caseId,
      { to: 'open', by: 'status-check', note: '', nextCheckAtMs: base + 1_000 },
      'open',
    );
    await h.store.transition(
      b.caseId,
      { to: 'needs_manual', by: 'status-check', note: 'no status check' },
      'open',
    );
    const ids = (cases: ReconciliationCase[]): string[] => cases.map((x) => x.caseId);
    expect(ids(await h.store.list({ tenant }))).toEqual([a.caseId, b.caseId, c.caseId, d.caseId]);
    expect(ids(await h.store.list({ tenant, state: 'open' }))).toEqual([a.caseId, c.caseId, d.caseId]);
    expect(ids(await h.store.list({ tenant, state: 'needs_manual' }))).toEqual([b.caseId]);
    expect(ids(await h.store.list({ tenant, tool: 'refund_payment' }))).toEqual([
      a.caseId,
      b.caseId,
      d.caseId,
    ]);
    expect(ids(await h.store.list({ tenant, dueBeforeMs: base + 999 }))).toEqual([c.caseId, d.caseId]);
    expect(ids(await h.store.list({ tenant, dueBeforeMs: base + 1_000 }))).toEqual([
      c.caseId,
      d.caseId,
      a.caseId,
    ]);
    expect(ids(await h.store.list({ tenant, dueBeforeMs: base + 20 }))).toEqual([c.caseId]);
    expect(ids(await h.store.list({ tenant, dueBeforeMs: base + 20.9 }))).toEqual([c.caseId]);
    expect(ids(await h.store.list({ tenant, dueBeforeMs: base + 5_000, limit: 2 }))).toEqual([
      c.caseId,
      d.caseId,
    ]);
    expect(ids(await h.store.list({ tenant, tool: 'send_email', dueBeforeMs: base + 5_000 }))).toEqual([
      c.caseId,
    ]);
    expect(await h.store.list({ tenant: uniqueName('nobody') })).toEqual([]);
    await expect(h.store.list({ tenant, dueBeforeMs: NaN })).rejects.toBeInstanceOf(ToolgateError);
  });

  it('pages, orders, searches and counts by state within the filters', async () => {
    const t = uniqueName('tenant');
    const opened: ReconciliationCase[] = [];
    for (let i = 0; i < 5; i++) {
      const dl = deadLetter({ tenant: t, errorMessage: i === 3 ? 'Gateway said 100% NO_funds' : 'timeout' });
      opened.push((await h.store.openFromDeadLetter(dl)).case);
      await h.clock.advance(10);
    }
    await h.store.transition(
      opened[1]!.caseId,
      { to: 'needs_manual', by: 'status-check', note: 'x' },
      'open',
    );
    const ids = (cases: ReconciliationCase[]): string[] => cases.map((x) => x.caseId);
    const all = ids(opened);
    expect(ids(await h.store.list({ tenant: t, limit: 2 }))).toEqual(all.slice(0, 2));
    expect(ids(await h.store.list({ tenant: t, limit: 2, offset: 2 }))).toEqual(all.slice(2, 4));
    expect(ids(await h.store.list({ tenant: t, limit: 2, offset: 4 }))).toEqual(all.slice(4));
    expect(ids(await h.store.list({ tenant: t, order: 'desc', limit: 3 }))).toEqual(
      [...all].reverse().slice(0, 3),
    );
    expect(ids(await h.store.list({ tenant: t, order: 'desc', offset: 3 }))).toEqual([all[1], all[0]]);
    // Search: any part of the ids, trace, tool or error message, ignoring case; % and _ are plain text.
    expect(ids(await h.store.list({ tenant: t, search: '100% no_FUNDS' }))).toEqual([all[3]]);
    expect(ids(await h.store.list({ tenant: t, search: '%' }))).toEqual([all[3]]);
    expect(ids(await h.store.list({ tenant: t, search: opened[2]!.callId!.slice(2).toUpperCase() }))).toEqual(
      [all[2]],
    );
    expect(ids(await h.store.list({ tenant: t, search: opened[4]!.caseId }))).toEqual([all[4]]);
    expect(ids(await h.store.list({ tenant: t, search: opened[0]!.deadLetterId }))).toEqual([all[0]]);
    expect(await h.store.list({ tenant: t, search: 'nothing like it' })).toEqual([]);
    expect(await h.store.countByState({ tenant: t })).toEqual({
      open: 4,
      needs_manual: 1,
      resolved_succeeded: 0,
      resolved_failed: 0,
    });
    expect(await h.store.countByState({ tenants: [t], search: 'timeout' })).toEqual({
      open: 3,
      needs_manual: 1,
      resolved_succeeded: 0,
      resolved_failed: 0,
    });
    expect(await h.store.countByState({ tenants: [] })).toEqual({
      open: 0,
      needs_manual: 0,
      resolved_succeeded: 0,
      resolved_failed: 0,
    });
    const created = (i: number) => opened[i]!.createdAtMs;
    expect(
      ids(await h.store.list({ tenant: t, createdFromMs: created(1), createdToMs: created(3) })),
    ).toEqual([all[1], all[2]]);
    expect(ids(await h.store.list({ tenant: t, reason: 'UNRESOLVED', limit: 1 }))).toEqual([all[0]]);
    expect(await h.store.list({ tenant: t, reason: 'POISON' })).toEqual([]);
    expect((await h.store.countByState({ tenant: t, createdFromMs: created(2) })).open).toBe(3);
    await expect(h.store.list({ tenant: t, offset: NaN })).rejects.toBeInstanceOf(ToolgateError);
    await expect(h.store.list({ tenant: t, search: 'x'.repeat(201) })).rejects.toBeInstanceOf(ToolgateError);
  });

  it('lists only the tenants of a scope, applying the limit after the scope (none for an empty scope)', async () => {
    const [t1, t2, t3] = [uniqueName('tenant'), uniqueName('tenant'), uniqueName('tenant')];
    const opened: ReconciliationCase[] = [];
    for (const t of [t1, t2, t1, t3, t2, t1]) {
      opened.push((await h.store.openFromDeadLetter(deadLetter({ tenant: t }))).case);
      await h.clock.advance(10);
    }
    const ids = (cases: ReconciliationCase[]): string[] => cases.map((x) => x.caseId);
    const of = (...ts: string[]) => ids(opened.filter((c) => ts.includes(c.tenant!)));
    expect(ids(await h.store.list({ tenants: [t1, t3] }))).toEqual(of(t1, t3));
    expect(ids(await h.store.list({ tenants: [t1, t3], limit: 3 }))).toEqual(of(t1, t3).slice(0, 3));
    expect(ids(await h.store.list({ tenants: [t2], tenant: t2 }))).toEqual(of(t2));
    expect(await h.store.list({ tenants: [t2], tenant: t1 })).toEqual([]);
    expect(await h.store.list({ tenants: [] })).toEqual([]);
    // A case without a tenant (an undecodable poison letter) is in no tenant's scope.
    const poison = await h.store.openFromDeadLetter(
      deadLetter({
        callId: null,
        reason: 'POISON',
        tenant: null,
        tool: null,
        deadLetterId: uniqueName('dl'),
      }),
    );
    expect(ids(await h.store.list({ tenants: [t1, t2, t3], limit: 10_000 }))).not.toContain(
      poison.case.caseId,
    );
  });
});

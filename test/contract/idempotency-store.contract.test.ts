import { describe, expect, it } from 'vitest';
import type {
  ClaimResult,
  IdempotencyStore,
  PeekResult,
  StoredResult,
} from '../../libs/ports/idempotency-store.js';
import type { IdempotencyStoreOptions } from '../../libs/adapters/memory/index.js';
import { uniqueName } from '../helpers/names.js';
import { openForSuite } from '../helpers/stack-lifecycle.js';
import { timed, untilForgotten, withGrowingPeriod } from './store-time.js';
import { idempotencyStoreAdapters, type AdapterCase, type Harness } from './store-harnesses.js';

/** Leases and TTLs short enough to wait out for real against Redis and Postgres. */
const SHORT_MS = 200;
const PAST_SHORT_MS = 400;
const LONG_LEASE_MS = 30_000;
const DAY_MS = 86_400_000;
/** Slack for comparing the store's clock (Redis TIME, Postgres now()) with this process's. */
const CLOCK_SLACK_MS = 250;

const result = (value: unknown): StoredResult => ({
  outcome: 'SUCCESS',
  result: value,
  completedAtMs: 1_700_000_123_456,
});

/** A claim's answer for a key completed with `stored`. */
const completed = (stored: StoredResult): ClaimResult => ({ kind: 'completed', stored });
/** A claim's answer for a key `owner` holds until `leaseExpiresAtMs`. */
const inFlight = (owner: string, leaseExpiresAtMs: number): ClaimResult => ({
  kind: 'in-flight',
  owner,
  leaseExpiresAtMs,
});

/** A peek's answer for an in-flight record of `fingerprint` held by `owner` until `leaseExpiresAtMs`. */
const peekedInFlight = (
  owner: string,
  leaseExpiresAtMs: number,
  leaseExpired: boolean,
  fingerprint = 'fp',
): PeekResult => ({ kind: 'in-flight', fingerprint, owner, leaseExpiresAtMs, leaseExpired });
/** A peek's answer for a record of `fingerprint` completed with `stored`. */
const peekedCompleted = (stored: StoredResult, fingerprint = 'fp'): PeekResult => ({
  kind: 'completed',
  fingerprint,
  stored,
});

function expectKind<K extends ClaimResult['kind']>(
  claim: ClaimResult,
  kind: K,
): Extract<ClaimResult, { kind: K }> {
  expect(claim.kind).toBe(kind);
  return claim as Extract<ClaimResult, { kind: K }>;
}

function idempotencyStoreContract(adapter: AdapterCase<IdempotencyStore, IdempotencyStoreOptions>): void {
  let h: Harness<IdempotencyStore>;
  let store: IdempotencyStore;
  const key = (): string => uniqueName('key');

  openForSuite(async () => {
    h = await adapter.create({});
    store = h.subject;
    return h;
  });

  it('answers claimed to the first claim of a fresh key, with a lease of leaseMs from now', async () => {
    const before = h.now();
    const claim = expectKind(await store.claim(key(), 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
    const after = h.now();
    expect(claim.leaseExpiresAtMs).toBeGreaterThanOrEqual(before + LONG_LEASE_MS - CLOCK_SLACK_MS);
    expect(claim.leaseExpiresAtMs).toBeLessThanOrEqual(after + LONG_LEASE_MS + CLOCK_SLACK_MS);
  });

  it('answers in-flight, naming the owner and its lease, while a live claim holds the key', async () => {
    const k = key();
    const first = expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
    const second = expectKind(await h.peer.claim(k, 'fp', 'owner-b', LONG_LEASE_MS), 'in-flight');
    expect(second).toEqual(inFlight('owner-a', first.leaseExpiresAtMs));
    // The holder itself is told the same: a claim is not re-entrant.
    expect((await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS)).kind).toBe('in-flight');
  });

  it('answers completed with the stored result after complete, to any claimant', async () => {
    const k = key();
    const stored = result({
      refundId: 'R-1',
      amount: 49.99,
      items: [1, 'two', null],
      nested: { ok: true, text: 'héllo ✓' },
    });
    expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
    expect(await store.complete(k, 'owner-a', stored, DAY_MS)).toBe(true);
    expect(await h.peer.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(completed(stored));
    expect(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS)).toEqual(completed(stored));
  });

  it('answers conflict for the same key with another fingerprint, in flight and after completion', async () => {
    const k = key();
    expectKind(await store.claim(k, 'fp-1', 'owner-a', LONG_LEASE_MS), 'claimed');
    expect(await h.peer.claim(k, 'fp-2', 'owner-b', LONG_LEASE_MS)).toEqual({
      kind: 'conflict',
      storedFingerprint: 'fp-1',
    });
    expect(await store.complete(k, 'owner-a', result(1), DAY_MS)).toBe(true);
    expect(await h.peer.claim(k, 'fp-2', 'owner-b', LONG_LEASE_MS)).toEqual({
      kind: 'conflict',
      storedFingerprint: 'fp-1',
    });
    // The conflicting claims changed nothing.
    expect(await store.claim(k, 'fp-1', 'owner-c', LONG_LEASE_MS)).toEqual(completed(result(1)));
  });

  it('ignores complete and release by a non-owner: false, and the owner still holds the key', async () => {
    const k = key();
    const first = expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
    expect(await h.peer.complete(k, 'intruder', result('forged'), DAY_MS)).toBe(false);
    expect(await h.peer.release(k, 'intruder')).toBe(false);
    expect(await h.peer.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(
      inFlight('owner-a', first.leaseExpiresAtMs),
    );
    expect(await store.complete(k, 'owner-a', result('real'), DAY_MS)).toBe(true);
    expect(await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(completed(result('real')));
  });

  it('returns false from complete and release of a key nobody claimed, and creates nothing', async () => {
    const k = key();
    expect(await store.complete(k, 'owner-a', result(1), DAY_MS)).toBe(false);
    expect(await store.release(k, 'owner-a')).toBe(false);
    expectKind(await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS), 'claimed');
  });

  it('lets a later claim start afresh after the owner releases, and only once', async () => {
    const k = key();
    expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
    expect(await store.release(k, 'owner-a')).toBe(true);
    expect(await store.release(k, 'owner-a')).toBe(false);
    expect(await store.complete(k, 'owner-a', result(1), DAY_MS)).toBe(false);
    // Released means the effect did not happen: a fresh claim, not a take-over, even with other arguments.
    expectKind(await h.peer.claim(k, 'fp-other', 'owner-b', LONG_LEASE_MS), 'claimed');
  });

  it('refuses release of a completed key: the result stays', async () => {
    const k = key();
    expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
    expect(await store.complete(k, 'owner-a', result(7), DAY_MS)).toBe(true);
    expect(await store.release(k, 'owner-a')).toBe(false);
    expect(await store.complete(k, 'owner-a', result(8), DAY_MS)).toBe(false);
    expect(await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(completed(result(7)));
  });

  it('answers taken-over (never claimed) once a lease runs out, and the old owner loses the key', async () => {
    const k = key();
    expectKind(await store.claim(k, 'fp', 'owner-a', SHORT_MS), 'claimed');
    await h.pass(PAST_SHORT_MS);
    const before = h.now();
    const takeover = expectKind(await h.peer.claim(k, 'fp', 'owner-b', LONG_LEASE_MS), 'taken-over');
    expect(takeover.previousOwner).toBe('owner-a');
    expect(takeover.leaseExpiresAtMs).toBeGreaterThanOrEqual(before + LONG_LEASE_MS - CLOCK_SLACK_MS);
    // The new owner's lease is live: others are told it is in flight there.
    expect(await store.claim(k, 'fp', 'owner-c', LONG_LEASE_MS)).toEqual(
      inFlight('owner-b', takeover.leaseExpiresAtMs),
    );
    expect(await store.complete(k, 'owner-a', result('late'), DAY_MS)).toBe(false);
    expect(await store.release(k, 'owner-a')).toBe(false);
    expect(await h.peer.complete(k, 'owner-b', result('b'), DAY_MS)).toBe(true);
    expect(await store.claim(k, 'fp', 'owner-c', LONG_LEASE_MS)).toEqual(completed(result('b')));
  });

  it('still answers conflict, not taken-over, for another fingerprint on a lapsed lease', async () => {
    const k = key();
    expectKind(await store.claim(k, 'fp-1', 'owner-a', SHORT_MS), 'claimed');
    await h.pass(PAST_SHORT_MS);
    expect(await store.claim(k, 'fp-2', 'owner-b', LONG_LEASE_MS)).toEqual({
      kind: 'conflict',
      storedFingerprint: 'fp-1',
    });
    expect((await store.claim(k, 'fp-1', 'owner-b', LONG_LEASE_MS)).kind).toBe('taken-over');
  });

  it('lets an owner whose lease ran out still complete while nobody has taken over', async () => {
    const k = key();
    expectKind(await store.claim(k, 'fp', 'owner-a', SHORT_MS), 'claimed');
    await h.pass(PAST_SHORT_MS);
    expect(await store.complete(k, 'owner-a', result('slow but done'), DAY_MS)).toBe(true);
    expect(await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(completed(result('slow but done')));
  });

  it('forgets a completed record after its TTL: the next claim is a fresh claim', async () => {
    await withGrowingPeriod(SHORT_MS, async (ttlMs) => {
      const k = key();
      expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
      const completes = await timed(h, () => store.complete(k, 'owner-a', result(1), ttlMs));
      expect(completes.value).toBe(true);
      // Each read is a claim with other arguments: a conflict while the record is kept, a fresh claim after.
      const { sawLive } = await untilForgotten(h, ttlMs, completes, async () => {
        const claim = await store.claim(k, 'fp-new', 'owner-b', LONG_LEASE_MS);
        if (claim.kind === 'claimed') return false;
        expect(claim).toEqual({ kind: 'conflict', storedFingerprint: 'fp' });
        return true;
      });
      return sawLive;
    });
  });

  it('gives exactly one of 50 concurrent claims of a fresh key the claim; the rest see it in flight', async () => {
    const k = key();
    const claims = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? store : h.peer).claim(k, 'fp', `owner-${i}`, LONG_LEASE_MS),
      ),
    );
    const winners = claims.flatMap((c, i) => (c.kind === 'claimed' ? [`owner-${i}`] : []));
    expect(winners).toHaveLength(1);
    const others = claims.filter((c) => c.kind !== 'claimed');
    expect(others).toHaveLength(49);
    for (const c of others) expect(c).toMatchObject({ kind: 'in-flight', owner: winners[0] });
  });

  it('gives exactly one of 50 concurrent claims of a lapsed lease the take-over', async () => {
    const k = key();
    expectKind(await store.claim(k, 'fp', 'crashed', SHORT_MS), 'claimed');
    await h.pass(PAST_SHORT_MS);
    const claims = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? store : h.peer).claim(k, 'fp', `owner-${i}`, LONG_LEASE_MS),
      ),
    );
    const kinds = claims.map((c) => c.kind).sort();
    expect(kinds.filter((kind) => kind === 'taken-over')).toHaveLength(1);
    expect(kinds.filter((kind) => kind === 'in-flight')).toHaveLength(49);
    const winner = claims.findIndex((c) => c.kind === 'taken-over');
    expect(claims[winner]).toMatchObject({ previousOwner: 'crashed' });
    for (const c of claims) if (c.kind === 'in-flight') expect(c.owner).toBe(`owner-${winner}`);
  });

  it('refuses nonsensical arguments with a RangeError and stores nothing', async () => {
    const k = key();
    await expect(store.claim(k, 'fp', 'owner-a', 0)).rejects.toThrow(RangeError);
    await expect(store.claim(k, 'fp', 'owner-a', Number.NaN)).rejects.toThrow(RangeError);
    await expect(store.claim('', 'fp', 'owner-a', LONG_LEASE_MS)).rejects.toThrow(RangeError);
    await expect(store.claim(k, 'fp', '', LONG_LEASE_MS)).rejects.toThrow(RangeError);
    expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
    await expect(store.complete(k, 'owner-a', result(1), -5)).rejects.toThrow(RangeError);
    expect((await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).kind).toBe('in-flight');
  });

  describe('settle (the reconciled outcome of an UNRESOLVED call)', () => {
    const unresolved: StoredResult = {
      outcome: 'UNRESOLVED',
      result: { code: 'UNRESOLVED', message: 'outcome unknown' },
      completedAtMs: 1_700_000_000_000,
    };
    const settled: StoredResult = {
      outcome: 'SUCCESS',
      result: { movementId: 'M-9', note: 'confirmed by a status check ✓' },
      completedAtMs: 1_700_000_999_000,
    };

    it('replaces a record completed as UNRESOLVED: every later duplicate gets the settled answer', async () => {
      const k = key();
      expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
      expect(await store.complete(k, 'owner-a', unresolved, DAY_MS)).toBe(true);
      expect(await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(completed(unresolved));
      expect(await h.peer.settle(k, settled, DAY_MS)).toBe(true);
      expect(await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(completed(settled));
      expect(await h.peer.claim(k, 'fp', 'owner-c', LONG_LEASE_MS)).toEqual(completed(settled));
      // Settled once: the record is no longer UNRESOLVED, so a second settle changes nothing.
      expect(await store.settle(k, result('again'), DAY_MS)).toBe(false);
      expect(await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(completed(settled));
    });

    it('keeps the fingerprint: other arguments under a settled key are still a conflict', async () => {
      const k = key();
      expectKind(await store.claim(k, 'fp-1', 'owner-a', LONG_LEASE_MS), 'claimed');
      expect(await store.complete(k, 'owner-a', unresolved, DAY_MS)).toBe(true);
      expect(await store.settle(k, settled, DAY_MS)).toBe(true);
      expect(await store.claim(k, 'fp-2', 'owner-b', LONG_LEASE_MS)).toEqual({
        kind: 'conflict',
        storedFingerprint: 'fp-1',
      });
    });

    it('refuses to touch a record completed with any other outcome', async () => {
      for (const outcome of ['SUCCESS', 'EXECUTION_ERROR']) {
        const k = key();
        const original: StoredResult = { outcome, result: { n: 1 }, completedAtMs: 1_700_000_000_000 };
        expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
        expect(await store.complete(k, 'owner-a', original, DAY_MS)).toBe(true);
        expect(await h.peer.settle(k, settled, DAY_MS)).toBe(false);
        expect(await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(completed(original));
      }
    });

    it('refuses to touch an in-flight record: the owner still holds it and can complete it', async () => {
      const k = key();
      const first = expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
      expect(await h.peer.settle(k, settled, DAY_MS)).toBe(false);
      expect(await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(
        inFlight('owner-a', first.leaseExpiresAtMs),
      );
      expect(await store.complete(k, 'owner-a', result('own'), DAY_MS)).toBe(true);
      expect(await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(completed(result('own')));
    });

    it('refuses an absent or expired record and creates nothing', async () => {
      const k = key();
      expect(await store.settle(k, settled, DAY_MS)).toBe(false);
      expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');

      const gone = key();
      expectKind(await store.claim(gone, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
      expect(await store.complete(gone, 'owner-a', unresolved, SHORT_MS)).toBe(true);
      await h.pass(PAST_SHORT_MS);
      expect(await store.settle(gone, settled, DAY_MS)).toBe(false);
      expectKind(await store.claim(gone, 'fp', 'owner-b', LONG_LEASE_MS), 'claimed');
    });

    it('gives the settled record its own TTL from now', async () => {
      await withGrowingPeriod(SHORT_MS, async (ttlMs) => {
        const k = key();
        expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
        expect(await store.complete(k, 'owner-a', unresolved, DAY_MS)).toBe(true);
        const settles = await timed(h, () => store.settle(k, settled, ttlMs));
        expect(settles.value).toBe(true);
        const { sawLive } = await untilForgotten(h, ttlMs, settles, async () => {
          const claim = await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS);
          if (claim.kind === 'claimed') return false;
          expect(claim).toEqual(completed(settled));
          return true;
        });
        return sawLive;
      });
    });

    it('lets exactly one of 20 concurrent settles of one UNRESOLVED record win', async () => {
      const k = key();
      expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
      expect(await store.complete(k, 'owner-a', unresolved, DAY_MS)).toBe(true);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? store : h.peer).settle(k, result(`settler-${i}`), DAY_MS),
        ),
      );
      const winners = answers.flatMap((won, i) => (won ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(
        completed(result(`settler-${winners[0]}`)),
      );
    });

    it('refuses nonsensical arguments with a RangeError and changes nothing', async () => {
      const k = key();
      expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
      expect(await store.complete(k, 'owner-a', unresolved, DAY_MS)).toBe(true);
      await expect(store.settle(k, settled, 0)).rejects.toThrow(RangeError);
      await expect(store.settle('', settled, DAY_MS)).rejects.toThrow(RangeError);
      expect(await store.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(completed(unresolved));
    });
  });

  describe('peek (read a record without changing it)', () => {
    it('says absent for a key nobody claimed, and creates nothing: the next claim is claimed', async () => {
      const k = key();
      expect(await store.peek(k)).toEqual({ kind: 'absent' });
      expect(await h.peer.peek(k)).toEqual({ kind: 'absent' });
      expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
    });

    it('shows a live claim: fingerprint, owner and lease, not expired; the owner keeps the key', async () => {
      const k = key();
      const first = expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
      const seen = peekedInFlight('owner-a', first.leaseExpiresAtMs, false);
      expect(await h.peer.peek(k)).toEqual(seen);
      expect(await store.peek(k)).toEqual(seen);
      // Exactly as without the peeks: in flight at owner-a with the same lease, which it completes.
      expect(await h.peer.claim(k, 'fp', 'owner-b', LONG_LEASE_MS)).toEqual(
        inFlight('owner-a', first.leaseExpiresAtMs),
      );
      expect(await store.complete(k, 'owner-a', result('done'), DAY_MS)).toBe(true);
    });

    it('shows a completed record with its stored result and fingerprint', async () => {
      const k = key();
      const stored = result({ refundId: 'R-2', nested: { text: 'héllo ✓' }, items: [1, null] });
      expectKind(await store.claim(k, 'fp-1', 'owner-a', LONG_LEASE_MS), 'claimed');
      expect(await store.complete(k, 'owner-a', stored, DAY_MS)).toBe(true);
      expect(await h.peer.peek(k)).toEqual(peekedCompleted(stored, 'fp-1'));
      expect(await h.peer.claim(k, 'fp-2', 'owner-b', LONG_LEASE_MS)).toEqual({
        kind: 'conflict',
        storedFingerprint: 'fp-1',
      });
      expect(await store.claim(k, 'fp-1', 'owner-b', LONG_LEASE_MS)).toEqual(completed(stored));
    });

    it('says a lapsed lease has expired, and takes nothing over: the next claim is the take-over', async () => {
      const k = key();
      const first = expectKind(await store.claim(k, 'fp', 'owner-a', SHORT_MS), 'claimed');
      await h.pass(PAST_SHORT_MS);
      const seen = peekedInFlight('owner-a', first.leaseExpiresAtMs, true);
      expect(await h.peer.peek(k)).toEqual(seen);
      expect(await store.peek(k)).toEqual(seen);
      const takeover = expectKind(await h.peer.claim(k, 'fp', 'owner-b', LONG_LEASE_MS), 'taken-over');
      expect(takeover.previousOwner).toBe('owner-a');
      expect(await store.peek(k)).toEqual(peekedInFlight('owner-b', takeover.leaseExpiresAtMs, false));
    });

    it('leaves a lapsed owner its key: it may still complete after a peek, as without one', async () => {
      const k = key();
      expectKind(await store.claim(k, 'fp', 'owner-a', SHORT_MS), 'claimed');
      await h.pass(PAST_SHORT_MS);
      expect(await h.peer.peek(k)).toMatchObject({ kind: 'in-flight', leaseExpired: true });
      expect(await store.complete(k, 'owner-a', result('slow but done'), DAY_MS)).toBe(true);
      expect(await h.peer.peek(k)).toEqual(peekedCompleted(result('slow but done')));
    });

    it('says absent after a release and after the TTL, and never extends a TTL', async () => {
      const released = key();
      expectKind(await store.claim(released, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
      expect(await store.release(released, 'owner-a')).toBe(true);
      expect(await store.peek(released)).toEqual({ kind: 'absent' });

      await withGrowingPeriod(SHORT_MS, async (ttlMs) => {
        const k = key();
        expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
        const completes = await timed(h, () => store.complete(k, 'owner-a', result(1), ttlMs));
        expect(completes.value).toBe(true);
        // Peeks by both clients, over and over: the record is still gone once its TTL has passed.
        let reads = 0;
        const { sawLive } = await untilForgotten(h, ttlMs, completes, async () => {
          const peeked = await (reads++ % 2 === 0 ? store : h.peer).peek(k);
          if (peeked.kind === 'absent') return false;
          expect(peeked).toEqual(peekedCompleted(result(1)));
          return true;
        });
        expectKind(await store.claim(k, 'fp-new', 'owner-b', LONG_LEASE_MS), 'claimed');
        return sawLive;
      });
    });

    it('shows a settled record as settle left it', async () => {
      const k = key();
      const unresolved: StoredResult = { outcome: 'UNRESOLVED', result: null, completedAtMs: 1 };
      expectKind(await store.claim(k, 'fp', 'owner-a', LONG_LEASE_MS), 'claimed');
      expect(await store.complete(k, 'owner-a', unresolved, DAY_MS)).toBe(true);
      expect(await store.peek(k)).toEqual(peekedCompleted(unresolved));
      expect(await store.settle(k, result('settled'), DAY_MS)).toBe(true);
      expect(await h.peer.peek(k)).toEqual(peekedCompleted(result('settled')));
    });

    it('refuses an empty key with a RangeError', async () => {
      await expect(store.peek('')).rejects.toThrow(RangeError);
    });
  });

  describe('with a short abandoned-marker retention', () => {
    let short: Harness<IdempotencyStore>;
    openForSuite(async () => (short = await adapter.create({ abandonedRetentionMs: SHORT_MS })));

    it('forgets an abandoned in-flight marker after lease + retention: the next claim is fresh', async () => {
      const k = key();
      expectKind(await short.subject.claim(k, 'fp', 'crashed', SHORT_MS), 'claimed');
      await short.pass(SHORT_MS + PAST_SHORT_MS);
      expectKind(await short.subject.claim(k, 'fp-new', 'owner-b', LONG_LEASE_MS), 'claimed');
      expect(await short.subject.complete(k, 'crashed', result(1), DAY_MS)).toBe(false);
    });

    it('peeks an abandoned marker past lease + retention as absent', async () => {
      const k = key();
      expectKind(await short.subject.claim(k, 'fp', 'crashed', SHORT_MS), 'claimed');
      await short.pass(SHORT_MS + PAST_SHORT_MS);
      expect(await short.peer.peek(k)).toEqual({ kind: 'absent' });
      expectKind(await short.subject.claim(k, 'fp', 'owner-b', LONG_LEASE_MS), 'claimed');
    });
  });
}

describe.each(idempotencyStoreAdapters)('IdempotencyStore contract: $name adapter', (adapter) => {
  idempotencyStoreContract(adapter);
});

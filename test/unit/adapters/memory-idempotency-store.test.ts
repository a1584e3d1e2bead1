import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { MemoryIdempotencyStore } from '../../../libs/adapters/memory/index.js';
import type { StoredResult } from '../../../libs/ports/idempotency-store.js';

const T0 = 1_700_000_000_000;

function setup(abandonedRetentionMs = 10_000): { clock: ManualClock; store: MemoryIdempotencyStore } {
  const clock = new ManualClock(T0);
  return { clock, store: new MemoryIdempotencyStore(clock, { abandonedRetentionMs }) };
}

describe('MemoryIdempotencyStore (exact times on a manual clock)', () => {
  it('leases for exactly leaseMs and treats the lease as lapsed from its expiry instant on', async () => {
    const { clock, store } = setup();
    expect(await store.claim('k', 'fp', 'a', 1000)).toEqual({ kind: 'claimed', leaseExpiresAtMs: T0 + 1000 });
    await clock.advance(999);
    expect(await store.claim('k', 'fp', 'b', 1000)).toEqual({
      kind: 'in-flight',
      owner: 'a',
      leaseExpiresAtMs: T0 + 1000,
    });
    await clock.advance(1);
    expect(await store.claim('k', 'fp', 'b', 500)).toEqual({
      kind: 'taken-over',
      previousOwner: 'a',
      leaseExpiresAtMs: T0 + 1500,
    });
  });

  it('rounds a fractional lease up to a whole millisecond, as the Redis and Postgres stores must', async () => {
    const { store } = setup();
    expect(await store.claim('k', 'fp', 'a', 0.2)).toEqual({ kind: 'claimed', leaseExpiresAtMs: T0 + 1 });
  });

  it('keeps a completed record for exactly ttlMs', async () => {
    const { clock, store } = setup();
    const stored: StoredResult = { outcome: 'SUCCESS', result: 1, completedAtMs: T0 };
    await store.claim('k', 'fp', 'a', 1000);
    expect(await store.complete('k', 'a', stored, 5000)).toBe(true);
    await clock.advance(4999);
    expect(await store.claim('k', 'fp', 'b', 1000)).toEqual({ kind: 'completed', stored });
    await clock.advance(1);
    expect(await store.claim('k', 'fp', 'b', 1000)).toEqual({ kind: 'claimed', leaseExpiresAtMs: T0 + 6000 });
  });

  it('keeps an abandoned marker for lease + retention, then forgets it', async () => {
    const { clock, store } = setup(10_000);
    await store.claim('k', 'fp', 'a', 1000);
    await clock.advance(1000 + 9999);
    expect((await store.claim('k', 'fp', 'b', 1000)).kind).toBe('taken-over');
    await clock.advance(1000 + 10_000);
    expect((await store.claim('k', 'fp', 'c', 1000)).kind).toBe('claimed');
  });

  it('stores a JSON copy: mutating the caller object afterwards changes nothing', async () => {
    const { store } = setup();
    const payload = { items: [1, 2], when: new Date(T0) };
    await store.claim('k', 'fp', 'a', 1000);
    await store.complete('k', 'a', { outcome: 'SUCCESS', result: payload, completedAtMs: T0 }, 5000);
    payload.items.push(3);
    const claim = await store.claim('k', 'fp', 'b', 1000);
    // Dates become ISO strings, exactly as through Redis or Postgres.
    expect(claim).toEqual({
      kind: 'completed',
      stored: {
        outcome: 'SUCCESS',
        result: { items: [1, 2], when: new Date(T0).toISOString() },
        completedAtMs: T0,
      },
    });
  });

  it('rejects a result JSON cannot hold and leaves the claim in flight', async () => {
    const { store } = setup();
    await store.claim('k', 'fp', 'a', 1000);
    await expect(
      store.complete('k', 'a', { outcome: 'SUCCESS', result: 10n, completedAtMs: T0 }, 5000),
    ).rejects.toThrow(TypeError);
    expect((await store.claim('k', 'fp', 'b', 1000)).kind).toBe('in-flight');
  });

  it('purgeExpired drops exactly the dead records', async () => {
    const { clock, store } = setup(10_000);
    const stored: StoredResult = { outcome: 'SUCCESS', result: null, completedAtMs: T0 };
    await store.claim('done-short', 'fp', 'a', 1000);
    await store.complete('done-short', 'a', stored, 2000);
    await store.claim('done-long', 'fp', 'a', 1000);
    await store.complete('done-long', 'a', stored, 60_000);
    await store.claim('abandoned', 'fp', 'a', 1000);
    expect(store.purgeExpired()).toBe(0);
    await clock.advance(20_000);
    expect(store.purgeExpired()).toBe(2);
    expect((await store.claim('done-long', 'fp', 'b', 1000)).kind).toBe('completed');
  });

  it('refuses a non-positive retention', () => {
    expect(() => new MemoryIdempotencyStore(new ManualClock(), { abandonedRetentionMs: 0 })).toThrow(
      RangeError,
    );
  });
});

describe('MemoryIdempotencyStore: ownership and fingerprints', () => {
  const stored = (outcome: string, result: unknown = null): StoredResult => ({
    outcome,
    result,
    completedAtMs: T0,
  });

  it('a claim with other arguments is a conflict, whether the key is in flight or completed', async () => {
    const { store } = setup();
    await store.claim('k', 'fp-1', 'a', 1000);
    expect(await store.claim('k', 'fp-2', 'b', 1000)).toEqual({
      kind: 'conflict',
      storedFingerprint: 'fp-1',
    });
    await store.complete('k', 'a', stored('SUCCESS', { refund: 'R-1' }), 5000);
    expect(await store.claim('k', 'fp-2', 'b', 1000)).toEqual({
      kind: 'conflict',
      storedFingerprint: 'fp-1',
    });
    expect(await store.peek('k')).toMatchObject({ kind: 'completed', fingerprint: 'fp-1' });
  });

  it('an owner whose lease was taken over can neither complete nor release', async () => {
    const { clock, store } = setup();
    await store.claim('k', 'fp', 'stale', 1000);
    await clock.advance(1000);
    expect((await store.claim('k', 'fp', 'fresh', 1000)).kind).toBe('taken-over');
    expect(await store.complete('k', 'stale', stored('SUCCESS', 'stale result'), 5000)).toBe(false);
    expect(await store.release('k', 'stale')).toBe(false);
    expect(await store.peek('k')).toMatchObject({ kind: 'in-flight', owner: 'fresh' });
    expect(await store.complete('k', 'fresh', stored('SUCCESS', 'fresh result'), 5000)).toBe(true);
    expect(await store.claim('k', 'fp', 'c', 1000)).toEqual({
      kind: 'completed',
      stored: stored('SUCCESS', 'fresh result'),
    });
  });

  it('an owner whose lease ran out may still complete while nobody took over', async () => {
    const { clock, store } = setup();
    await store.claim('k', 'fp', 'a', 1000);
    await clock.advance(5000);
    expect(await store.complete('k', 'a', stored('SUCCESS'), 5000)).toBe(true);
  });

  it('complete writes nothing for a key never claimed, or already completed', async () => {
    const { store } = setup();
    expect(await store.complete('k', 'a', stored('SUCCESS'), 5000)).toBe(false);
    expect(await store.peek('k')).toEqual({ kind: 'absent' });
    await store.claim('k', 'fp', 'a', 1000);
    expect(await store.complete('k', 'a', stored('SUCCESS', 1), 5000)).toBe(true);
    expect(await store.complete('k', 'a', stored('SUCCESS', 2), 5000)).toBe(false);
    expect(await store.claim('k', 'fp', 'b', 1000)).toEqual({
      kind: 'completed',
      stored: stored('SUCCESS', 1),
    });
  });

  it('release frees the key for the next claim, only for its owner and only while in flight', async () => {
    const { store } = setup();
    await store.claim('k', 'fp', 'a', 1000);
    expect(await store.release('k', 'b')).toBe(false);
    expect(await store.peek('k')).toMatchObject({ kind: 'in-flight', owner: 'a' });
    expect(await store.release('k', 'a')).toBe(true);
    expect(await store.peek('k')).toEqual({ kind: 'absent' });
    expect(await store.release('k', 'a')).toBe(false);
    expect(await store.claim('k', 'fp', 'b', 1000)).toEqual({ kind: 'claimed', leaseExpiresAtMs: T0 + 1000 });
    await store.complete('k', 'b', stored('SUCCESS'), 5000);
    expect(await store.release('k', 'b')).toBe(false);
    expect((await store.peek('k')).kind).toBe('completed');
  });

  it('release of an expired marker answers false', async () => {
    const { clock, store } = setup(10_000);
    await store.claim('k', 'fp', 'a', 1000);
    await clock.advance(1000 + 10_000);
    expect(await store.release('k', 'a')).toBe(false);
  });

  it.each([
    ['release', (s: MemoryIdempotencyStore) => s.release('', 'a'), 'key must be a non-empty string'],
    ['release', (s: MemoryIdempotencyStore) => s.release('k', ''), 'owner must be a non-empty string'],
    ['settle', (s: MemoryIdempotencyStore) => s.settle('', stored('SUCCESS'), 1000), 'key must be'],
    ['settle', (s: MemoryIdempotencyStore) => s.settle('k', stored('SUCCESS'), 0), 'ttlMs must be'],
    ['peek', (s: MemoryIdempotencyStore) => s.peek(''), 'key must be a non-empty string'],
    ['complete', (s: MemoryIdempotencyStore) => s.complete('k', 'a', stored('SUCCESS'), -1), 'ttlMs must be'],
  ])('%s refuses a bad argument with a RangeError that names it', async (_, call, message) => {
    const { store } = setup();
    const refused = call(store);
    await expect(refused).rejects.toThrow(RangeError);
    await expect(refused).rejects.toThrow(new RegExp(`^${message}`));
  });

  it('settle replaces exactly an UNRESOLVED result, keeps the fingerprint and restarts the ttl', async () => {
    const { clock, store } = setup();
    await store.claim('k', 'fp', 'a', 1000);
    await store.complete('k', 'a', stored('UNRESOLVED'), 5000);
    await clock.advance(4000);
    expect(await store.settle('k', stored('SUCCESS', { refund: 'R-1' }), 3000)).toBe(true);
    expect(await store.peek('k')).toEqual({
      kind: 'completed',
      fingerprint: 'fp',
      stored: stored('SUCCESS', { refund: 'R-1' }),
    });
    // Settling again finds it no longer UNRESOLVED.
    expect(await store.settle('k', stored('EXECUTION_ERROR'), 3000)).toBe(false);
    await clock.advance(2999);
    expect((await store.claim('k', 'fp', 'b', 1000)).kind).toBe('completed');
    await clock.advance(1);
    expect((await store.claim('k', 'fp', 'b', 1000)).kind).toBe('claimed');
  });

  it('settle leaves an in-flight, absent or otherwise completed record alone', async () => {
    const { store } = setup();
    expect(await store.settle('absent', stored('SUCCESS'), 3000)).toBe(false);
    expect(await store.peek('absent')).toEqual({ kind: 'absent' });
    await store.claim('running', 'fp', 'a', 1000);
    expect(await store.settle('running', stored('SUCCESS'), 3000)).toBe(false);
    expect((await store.peek('running')).kind).toBe('in-flight');
    await store.claim('done', 'fp', 'a', 1000);
    await store.complete('done', 'a', stored('EXECUTION_ERROR', { code: 'BAD_OUTPUT' }), 5000);
    expect(await store.settle('done', stored('SUCCESS'), 3000)).toBe(false);
    expect(await store.peek('done')).toMatchObject({
      stored: stored('EXECUTION_ERROR', { code: 'BAD_OUTPUT' }),
    });
  });

  it('peek reads without changing anything, and tells a lapsed lease from a live one', async () => {
    const { clock, store } = setup(10_000);
    await store.claim('k', 'fp', 'a', 1000);
    expect(await store.peek('k')).toEqual({
      kind: 'in-flight',
      fingerprint: 'fp',
      owner: 'a',
      leaseExpiresAtMs: T0 + 1000,
      leaseExpired: false,
    });
    await clock.advance(999);
    expect(await store.peek('k')).toMatchObject({ leaseExpired: false });
    await clock.advance(1);
    expect(await store.peek('k')).toMatchObject({ leaseExpired: true });
    // A peek took no lease: the next claim still takes over from "a".
    expect(await store.claim('k', 'fp', 'b', 1000)).toMatchObject({ kind: 'taken-over', previousOwner: 'a' });
  });

  it('peek reports an expired record absent but leaves it for purgeExpired', async () => {
    const { clock, store } = setup(10_000);
    await store.claim('k', 'fp', 'a', 1000);
    await store.complete('k', 'a', stored('SUCCESS'), 2000);
    await clock.advance(1999);
    expect((await store.peek('k')).kind).toBe('completed');
    await clock.advance(1);
    expect(await store.peek('k')).toEqual({ kind: 'absent' });
    expect(store.purgeExpired()).toBe(1);
  });
});

import { expect } from 'vitest';
import type { Harness } from './store-harnesses.js';

/**
 * Checking what a store does over time (a ttl running out, a bucket refilling) when the store keeps
 * its own time (Redis, Postgres) without racing it.
 *
 * The test cannot stop a server's clock, so it does not assume how long its own steps take. It
 * brackets every call between two readings of the harness's clock and judges each answer by what
 * the brackets allow: between a call that ended at e and a later one that began at b at least b - e
 * passed for the store; between a call that began at b and one that ended at e, at most e - b (see
 * {@link between}). Such checks hold however slow the machine is. What a slow machine can take away
 * is the sight of an early state (an entry while it lives, a bucket before it refills); a check that
 * needs one asks for a longer period and starts again (see {@link withGrowingPeriod}). On the manual
 * clock (memory adapters) no time passes inside a call, so every bracket is a point and the first
 * attempt always decides.
 */

/**
 * Whole milliseconds of the readings on either side, and the servers' rounding: Redis keeps a key
 * until its millisecond has passed, and Date.now() truncates.
 */
const ROUNDING_MS = 2;

/** A call's answer, with the harness's clock read just before and just after it. */
export interface Timed<T> {
  readonly value: T;
  readonly startMs: number;
  readonly endMs: number;
}

export async function timed<T>(h: Harness<unknown>, call: () => Promise<T>): Promise<Timed<T>> {
  const startMs = h.now();
  const value = await call();
  return { value, startMs, endMs: h.now() };
}

/** The least and the most time that may have passed for the store from the call `from` to the later call `to`. */
export function between(
  from: Timed<unknown>,
  to: Timed<unknown>,
): { readonly leastMs: number; readonly mostMs: number } {
  return {
    leastMs: Math.max(0, to.startMs - from.endMs - ROUNDING_MS),
    mostMs: to.endMs - from.startMs + ROUNDING_MS,
  };
}

/** Fails unless `ms` may have passed for the store from the call `from` to the later call `to`. */
export function expectMayHavePassed(
  ms: number,
  from: Timed<unknown>,
  to: Timed<unknown>,
  what?: string,
): void {
  expect(between(from, to).mostMs, what).toBeGreaterThanOrEqual(ms);
}

/** What {@link untilForgotten} saw. */
export interface Forgetting {
  /** Whether some read found the entry still there. */
  readonly sawLive: boolean;
  /** The read that found it gone. */
  readonly gone: Timed<false>;
}

/**
 * Reads the entry written by `written` (kept for `ttlMs`) with `isLive` until it is gone, letting
 * time pass for the store between reads, and fails the test on any answer the ttl rules out: gone
 * before `ttlMs` had passed, or there after it.
 */
export async function untilForgotten(
  h: Harness<unknown>,
  ttlMs: number,
  written: Timed<unknown>,
  isLive: () => Promise<boolean>,
): Promise<Forgetting> {
  const stepMs = Math.max(1, Math.floor(ttlMs / 6));
  let sawLive = false;
  for (;;) {
    const read = await timed(h, isLive);
    if (!read.value) {
      expectMayHavePassed(ttlMs, written, read, 'forgotten before its ttl had passed');
      return { sawLive, gone: { ...read, value: false } };
    }
    expect(between(written, read).leastMs, 'still there after its ttl had passed').toBeLessThanOrEqual(ttlMs);
    sawLive = true;
    await h.pass(stepMs);
  }
}

/**
 * Runs `attempt` with a period (a ttl, a refill time) of `firstMs`, then with twice the period each
 * time it answers false (the machine was too slow for that period to show what the attempt checks),
 * up to `attempts` times.
 */
export async function withGrowingPeriod(
  firstMs: number,
  attempt: (periodMs: number) => Promise<boolean>,
  attempts = 6,
): Promise<void> {
  let periodMs = firstMs;
  for (let i = 0; i < attempts; i++, periodMs *= 2) if (await attempt(periodMs)) return;
  expect.fail(`no attempt was conclusive, up to a period of ${periodMs / 2} ms`);
}

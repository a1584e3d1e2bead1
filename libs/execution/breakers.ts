import CircuitBreaker from 'opossum';
import { classify } from '../core/classify.js';
import { ToolgateError } from '../core/errors.js';
import { systemClock } from '../core/system-clock.js';
import type { CircuitBreakers } from '../pipeline/deps.js';
import type { Clock } from '../core/clock.js';

/** Settings shared by every downstream's breaker. */
export interface BreakerOptions {
  /** Open when the share of counted failures in the rolling window exceeds this (0–100). */
  readonly errorThresholdPercentage: number;
  /** Calls needed in the rolling window before the breaker may open at all. */
  readonly volumeThreshold: number;
  /** How long an open breaker rejects before letting one probe call through (half-open). */
  readonly resetTimeoutMs: number;
  /**
   * Must be `false`: the execute stage applies the per-attempt timeout itself (through an
   * AbortSignal the tool honours), and a second, breaker-owned timer would abandon calls the stage
   * still considers running.
   */
  readonly timeoutMs: false;
  /** Length of the rolling statistics window. Default 10 000 ms. */
  readonly rollingCountTimeoutMs?: number;
}

export type BreakerState = 'closed' | 'open' | 'half-open';

/** {@link CircuitBreakers} plus what metrics and shutdown need. */
export interface ManagedCircuitBreakers extends CircuitBreakers {
  /** The breaker state of `downstream`; a downstream never called is `closed`. */
  state(downstream: string): BreakerState;
  /** Every downstream with a breaker, and its state (for a gauge). */
  states(): ReadonlyMap<string, BreakerState>;
  /** Stops every breaker's timers; later `run` calls are rejected with BREAKER_OPEN. */
  shutdown(): void;
}

/**
 * One opossum breaker per downstream, created on first use and shared by every tool that names the
 * same downstream (so one dead service trips once, for all its tools).
 *
 * Contract:
 * - `run(downstream, fn)` calls `fn` at most once. While the breaker is open (or half-open with its
 *   one probe already in flight) it throws ToolgateError BREAKER_OPEN ("temporarily unavailable",
 *   with `retryAfterMs` until the next probe) WITHOUT calling `fn`: the effect definitely did not
 *   happen. Otherwise it returns or rethrows exactly what `fn` did.
 * - Only server-side failures count toward opening: errors that classify as SERVER_ERROR or TIMEOUT.
 *   Caller errors, refusals and everything else count as answers from a healthy downstream, so a
 *   model sending bad arguments cannot take a tool down for everyone.
 * - After `resetTimeoutMs` one probe is let through; its success closes the breaker, its counted
 *   failure opens it again.
 * - `clock` is used only to tell rejected callers how long until the next probe; opossum keeps its own
 *   timers.
 */
export function createCircuitBreakers(
  opts: BreakerOptions,
  clock: Clock = systemClock,
): ManagedCircuitBreakers {
  const breakers = new Map<
    string,
    { breaker: CircuitBreaker<[() => Promise<unknown>], unknown>; openedAtMs: number }
  >();
  let stopped = false;

  const breakerFor = (downstream: string) => {
    let entry = breakers.get(downstream);
    if (entry === undefined) {
      const breaker = new CircuitBreaker<[() => Promise<unknown>], unknown>((fn) => fn(), {
        name: downstream,
        timeout: opts.timeoutMs,
        errorThresholdPercentage: opts.errorThresholdPercentage,
        volumeThreshold: opts.volumeThreshold,
        resetTimeout: opts.resetTimeoutMs,
        rollingCountTimeout: opts.rollingCountTimeoutMs ?? 10_000,
        rollingPercentilesEnabled: false,
        enableSnapshots: false,
        // true = "not a failure of the downstream": counted as a success, never opens the breaker.
        errorFilter: (err: unknown) => !countsAgainstDownstream(err),
      });
      const created = { breaker, openedAtMs: 0 };
      breaker.on('open', () => {
        created.openedAtMs = clock.now();
      });
      entry = created;
      breakers.set(downstream, entry);
    }
    return entry;
  };

  const stateOf = (breaker: CircuitBreaker): BreakerState =>
    breaker.halfOpen ? 'half-open' : breaker.opened || breaker.isShutdown ? 'open' : 'closed';

  return {
    async run<T>(downstream: string, fn: () => Promise<T>): Promise<T> {
      if (stopped) throw breakerOpen(downstream, undefined, undefined);
      const entry = breakerFor(downstream);
      let called = false;
      try {
        return (await entry.breaker.fire(() => {
          called = true;
          return fn();
        })) as T;
      } catch (err) {
        if (called) throw err;
        const waited = clock.now() - entry.openedAtMs;
        const retryAfterMs = Math.max(0, opts.resetTimeoutMs - waited);
        throw breakerOpen(downstream, retryAfterMs, err);
      }
    },
    state(downstream: string): BreakerState {
      const entry = breakers.get(downstream);
      return entry === undefined ? 'closed' : stateOf(entry.breaker);
    },
    states(): ReadonlyMap<string, BreakerState> {
      const out = new Map<string, BreakerState>();
      for (const [name, entry] of breakers) out.set(name, stateOf(entry.breaker));
      return out;
    },
    shutdown(): void {
      stopped = true;
      for (const entry of breakers.values()) entry.breaker.shutdown();
    },
  };
}

/** SERVER_ERROR and TIMEOUT are the downstream's trouble; everything else is not. */
function countsAgainstDownstream(err: unknown): boolean {
  const code = classify(err).code;
  return code === 'SERVER_ERROR' || code === 'TIMEOUT';
}

function breakerOpen(downstream: string, retryAfterMs: number | undefined, cause: unknown): ToolgateError {
  return new ToolgateError(
    'BREAKER_OPEN',
    `The ${downstream} service is temporarily unavailable; the call was not attempted.`,
    {
      retryable: true,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

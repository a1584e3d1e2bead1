import type { Clock } from '../../libs/core/clock.js';
import { DownstreamError } from './downstream-error.js';
import { seededRandom } from './seeded-random.js';

/**
 * What can go wrong with one request to a fake downstream:
 * - `fail`: answered 503 before anything was applied;
 * - `hang`: never answers; the caller's signal (its timeout) ends the wait, nothing applied;
 * - `lose-response`: the effect IS applied, then the answer never arrives — the case idempotency
 *   keys exist for. By default the connection resets at once; planned with
 *   `{ silently: true }` the service goes quiet instead and the caller's own timeout ends the wait.
 */
export type Fault = 'fail' | 'hang' | 'lose-response';

interface PlannedFault {
  /** `none`: a request planned to be handled normally, so the faults planned after it wait their turn. */
  readonly fault: Fault | 'none';
  readonly silently: boolean;
}

/** Fractions of requests that meet each fault when nothing is planned; each in [0, 1], sum ≤ 1. */
export interface FaultRates {
  readonly fail?: number;
  readonly hang?: number;
  readonly loseResponse?: number;
}

export interface FaultInjectorOptions {
  readonly clock: Clock;
  /** Seed of the deterministic source used for {@link FaultRates}. Default 1. */
  readonly seed?: number;
  /** How long a `hang` lasts when the caller passed no signal. Default 60 000 ms. */
  readonly hangLimitMs?: number;
}

/** The error a reset connection surfaces as; toolgate classifies it as "outcome unknown". */
export function connectionReset(): Error {
  return Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
}

/**
 * The switchboard of one fake downstream: counts the requests it receives and decides which of them
 * fail, hang, lose their response or are slowed down.
 *
 * Contract:
 * - Planned faults (`failNext`, `hangNext`, `loseResponseNext`) are consumed first, in the order they
 *   were planned, one per request; then each request draws from the rates with a seeded generator,
 *   so the same seed and request sequence always meet the same faults.
 * - `received` counts every request that reached the service, faulted or not: a request refused by
 *   toolgate before execution never shows up here (that is how the tests prove a refusal never
 *   reached the tool: they count the calls).
 * - A delay (`setDelayMs`) is waited on the injected clock before the request is handled, and is
 *   cut short by the caller's signal.
 */
export class FaultInjector {
  readonly #clock: Clock;
  readonly #hangLimitMs: number;
  #random: () => number;
  #planned: PlannedFault[] = [];
  #rates: Required<FaultRates> = { fail: 0, hang: 0, loseResponse: 0 };
  #delayMs = 0;
  readonly #received = new Map<string, number>();
  readonly #applied = new Map<Fault, number>();

  constructor(options: FaultInjectorOptions) {
    this.#clock = options.clock;
    this.#random = seededRandom(options.seed ?? 1);
    this.#hangLimitMs = options.hangLimitMs ?? 60_000;
  }

  /** The next `n` requests are handled normally; faults planned after them meet the requests after. */
  passNext(n = 1): this {
    return this.#plan('none', n);
  }

  /** The next `n` requests are answered 503 without being applied. */
  failNext(n = 1): this {
    return this.#plan('fail', n);
  }

  /** The next `n` requests never answer (until the caller's signal aborts). */
  hangNext(n = 1): this {
    return this.#plan('hang', n);
  }

  /**
   * The next `n` requests are applied, then their response is lost: the connection resets, or with
   * `silently` no answer comes until the caller's signal aborts (a timeout after the effect).
   */
  loseResponseNext(n = 1, options: { readonly silently?: boolean } = {}): this {
    return this.#plan('lose-response', n, options.silently === true);
  }

  /** Fault fractions for requests with no planned fault. Throws on a rate outside [0, 1] or a sum > 1. */
  setRates(rates: FaultRates, seed?: number): this {
    const next = { fail: rates.fail ?? 0, hang: rates.hang ?? 0, loseResponse: rates.loseResponse ?? 0 };
    const values = Object.values(next);
    if (values.some((r) => !(r >= 0 && r <= 1)) || values.reduce((a, b) => a + b, 0) > 1) {
      throw new RangeError(
        `fault rates must each be in [0, 1] and sum to at most 1: ${JSON.stringify(rates)}`,
      );
    }
    this.#rates = next;
    if (seed !== undefined) this.#random = seededRandom(seed);
    return this;
  }

  /** Every request waits `ms` before it is handled (a slow service). 0 turns it off. */
  setDelayMs(ms: number): this {
    if (!(ms >= 0)) throw new RangeError(`delay must be >= 0 ms, got ${ms}`);
    this.#delayMs = ms;
    return this;
  }

  /** Forgets planned faults, rates and delay (counts are kept). */
  heal(): this {
    this.#planned = [];
    this.#rates = { fail: 0, hang: 0, loseResponse: 0 };
    this.#delayMs = 0;
    return this;
  }

  /** Requests received for `operation`, or for every operation when omitted. */
  received(operation?: string): number {
    if (operation !== undefined) return this.#received.get(operation) ?? 0;
    let total = 0;
    for (const n of this.#received.values()) total += n;
    return total;
  }

  /** How many requests met `fault` so far. */
  injected(fault: Fault): number {
    return this.#applied.get(fault) ?? 0;
  }

  /**
   * Handles one request: counts it, waits the delay, then either runs `apply` (which performs the
   * request against the service's state) or plays the fault chosen for it. Rejections: DownstreamError
   * 503 (`fail`), the signal's reason (`hang`, or an abort during the delay), a reset connection
   * (`lose-response`, after `apply` succeeded), or whatever `apply` threw.
   */
  async around<T>(operation: string, signal: AbortSignal | undefined, apply: () => Promise<T>): Promise<T> {
    this.#received.set(operation, (this.#received.get(operation) ?? 0) + 1);
    const next = this.#next();
    if (next !== undefined && next.fault !== 'none') {
      this.#applied.set(next.fault, (this.#applied.get(next.fault) ?? 0) + 1);
    }
    if (this.#delayMs > 0) await this.#clock.sleep(this.#delayMs, signal);
    switch (next?.fault) {
      case 'fail':
        throw new DownstreamError(503, 'unavailable', 'The service is temporarily unavailable.');
      case 'hang':
        return this.#silence(signal);
      case 'lose-response':
        await apply();
        if (next.silently) return this.#silence(signal);
        throw connectionReset();
      default:
        return apply();
    }
  }

  /** No answer until the caller gives up (or the hang limit passes): rejects either way. */
  async #silence(signal: AbortSignal | undefined): Promise<never> {
    await this.#clock.sleep(this.#hangLimitMs, signal);
    throw Object.assign(new Error('request timed out'), { code: 'ETIMEDOUT' });
  }

  #plan(fault: PlannedFault['fault'], n: number, silently = false): this {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`count must be a non-negative integer, got ${n}`);
    for (let i = 0; i < n; i++) this.#planned.push({ fault, silently });
    return this;
  }

  #next(): PlannedFault | undefined {
    const planned = this.#planned.shift();
    if (planned !== undefined) return planned;
    const { fail, hang, loseResponse } = this.#rates;
    if (fail + hang + loseResponse === 0) return undefined;
    const draw = this.#random();
    if (draw < fail) return { fault: 'fail', silently: false };
    if (draw < fail + hang) return { fault: 'hang', silently: false };
    if (draw < fail + hang + loseResponse) return { fault: 'lose-response', silently: false };
    return undefined;
  }
}

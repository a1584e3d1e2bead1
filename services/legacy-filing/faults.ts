import { seededRandom } from '../downstreams/seeded-random.js';

/** What happens to one submission. */
export type SubmitFault =
  | 'none'
  /** Committed, then the connection is destroyed without an answer (the lab's "dropped response"). */
  | 'drop-after-commit'
  /** The connection is destroyed before anything is written: nothing committed. */
  | 'drop-before-commit'
  /** Work is delayed by `slowMs` before committing; it commits only within the commit window and before its deadline. */
  | 'slow';

/** Fractions of requests meeting each fault; each in [0, 1], submit fractions summing to ≤ 1. */
export interface LegacyFaultRates {
  readonly dropAfterCommit?: number;
  readonly dropBeforeCommit?: number;
  readonly slow?: number;
  /** Status lookups answered 503 (the status side of the service is down). */
  readonly statusFailure?: number;
}

/**
 * The fault switchboard of the fake legacy service. Draws from seeded generators (one for submits,
 * one for lookups), so the same seed and request order meet the same faults on every run. Rates can
 * be changed while the service runs (a test turning the status endpoint off and on).
 */
export class LegacyFaults {
  #rates: Required<LegacyFaultRates>;
  readonly #submitRandom: () => number;
  readonly #statusRandom: () => number;

  constructor(rates: LegacyFaultRates = {}, seed = 1) {
    this.#rates = LegacyFaults.#checked(rates);
    this.#submitRandom = seededRandom(seed);
    this.#statusRandom = seededRandom(seed ^ 0x5bd1e995);
  }

  get rates(): Required<LegacyFaultRates> {
    return this.#rates;
  }

  setRates(rates: LegacyFaultRates): void {
    this.#rates = LegacyFaults.#checked(rates);
  }

  submitFault(): SubmitFault {
    const r = this.#submitRandom();
    const { dropAfterCommit, dropBeforeCommit, slow } = this.#rates;
    if (r < dropAfterCommit) return 'drop-after-commit';
    if (r < dropAfterCommit + dropBeforeCommit) return 'drop-before-commit';
    if (r < dropAfterCommit + dropBeforeCommit + slow) return 'slow';
    return 'none';
  }

  statusFails(): boolean {
    return this.#statusRandom() < this.#rates.statusFailure;
  }

  static #checked(rates: LegacyFaultRates): Required<LegacyFaultRates> {
    const full = {
      dropAfterCommit: rates.dropAfterCommit ?? 0,
      dropBeforeCommit: rates.dropBeforeCommit ?? 0,
      slow: rates.slow ?? 0,
      statusFailure: rates.statusFailure ?? 0,
    };
    for (const [name, value] of Object.entries(full)) {
      if (!(value >= 0 && value <= 1)) throw new RangeError(`fault rate ${name} must be in [0, 1]`);
    }
    if (full.dropAfterCommit + full.dropBeforeCommit + full.slow > 1) {
      throw new RangeError('submit fault rates must sum to at most 1');
    }
    return full;
  }
}

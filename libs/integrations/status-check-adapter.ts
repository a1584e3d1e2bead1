import { classify } from '../core/classify.js';
import { ToolgateError } from '../core/errors.js';
import type { ErrorCode } from '../core/errors.js';
import { attemptScope, raceAbort } from '../execution/attempt-scope.js';
import type { Clock } from '../core/clock.js';
import { silentLogger, type Logger } from '../ports/logger.js';
import type { ToolInvocation } from '../registry/tool-definition.js';
import type { SubmissionLedger } from './submission-ledger.js';

/**
 * A downstream without idempotency keys that can be asked, by a natural key, what it holds, and told
 * a deadline after which it must not record a submission. `Req` is one submission; `Rec` what the
 * system stores for it.
 */
export interface StatusCheckedSystem<Req, Rec> {
  /** Everything the system holds under `req`'s natural key (empty when nothing). Read-only. */
  lookup(req: Req, signal: AbortSignal): Promise<readonly Rec[]>;
  /** Whether `rec` is `req`'s effect (same content), not merely something under the same key. */
  isSameEffect(req: Req, rec: Rec): boolean;
  /**
   * Sends `req` once, telling the system to record it only if it can do so by `notAfterMs` (epoch
   * ms) — THE assumption this pattern rests on: a submission is recorded before its deadline or
   * never, however late the system gets to it.
   */
  submit(req: Req, notAfterMs: number, signal: AbortSignal): Promise<Rec>;
  /** The refusal when the natural key already holds a different effect (this adapter never amends). */
  conflict(req: Req, existing: readonly Rec[]): ToolgateError;
  /** `req`'s natural key as a string: sends are noted per natural key, whichever call made them. */
  naturalKey(req: Req): string;
}

/** Timing of {@link StatusCheckAdapter}. All in ms. */
export interface StatusCheckTiming {
  readonly lookupTimeoutMs: number;
  /** The longest a submission may take: its deadline is at most this long after it is sent. */
  readonly submitTimeoutMs: number;
  /**
   * Added to a deadline before "not found" is believed: the difference between this process's clock
   * and the system's (and the ledger's), and the system's commit itself.
   */
  readonly settleMarginMs: number;
}

/** A status check's answer; `applied` carries the record. */
export type CheckAnswer<Rec> =
  | { readonly state: 'applied'; readonly record: Rec }
  | { readonly state: 'not-applied' }
  | { readonly state: 'unknown' };

/** Options of {@link StatusCheckAdapter}. */
export interface StatusCheckAdapterOptions {
  /** Names the system in ledger keys and logs, e.g. `legacy-filing`. */
  readonly system: string;
  readonly clock: Clock;
  readonly ledger: SubmissionLedger;
  readonly timing: StatusCheckTiming;
  readonly logger?: Logger;
}

/** After these, the system definitely did not apply the submission: it refused, or it was never sent. */
const DEFINITELY_NOT_APPLIED: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'CALLER_ERROR',
  'RATE_LIMITED',
  'BREAKER_OPEN',
  'DEPENDENCY_UNAVAILABLE',
  'UNAUTHORIZED',
  'INVALID_PRINCIPAL',
  'POLICY_VIOLATION',
  'SCHEMA_INVALID',
]);

/**
 * The status-check pattern for a system without idempotency keys: the `check` and `apply` of a
 * status-check tool (see `StatusCheckSafety`). The executor runs the protocol between them.
 *
 * {@link StatusCheckAdapter.apply} sends once: it takes the deadline — the earlier of the executor's
 * effect deadline (`inv.effectDeadlineMs`, never past the call's lease) and `submitTimeoutMs` from
 * now — notes it in the shared ledger under the natural key (durably, BEFORE sending: a send whose
 * deadline is not noted could land unseen), and submits with it. A refusal or a request that never
 * left (CALLER_ERROR, RATE_LIMITED, BREAKER_OPEN, …) is rethrown: not applied. Anything else — a
 * timeout, a lost connection, a 5xx (a legacy system may fail after recording), a garbled answer —
 * is TIMEOUT: the outcome is unknown.
 *
 * {@link StatusCheckAdapter.check}: the same effect under the natural key → applied; a different one
 * → the system's `conflict` refusal (nothing is sent); the lookup or the ledger failing → unknown;
 * nothing found while a noted deadline (plus `settleMarginMs`) has not passed → unknown (a send may
 * still be recorded); otherwise not-applied — certain, because every send was told to be recorded
 * by its deadline or never, however late the system gets to it (a starved machine, a queue). Read-
 * only; safe from any process that shares the ledger.
 *
 * Why a deadline and not a "commit window" counted from the send: a system that records work
 * within W of *receiving* it says nothing about when it receives it. Under CPU starvation a
 * request can wait in a socket buffer or a pool queue for longer than any margin, and a "not found"
 * judged by send time plus W then lies: the call is sent again and filed twice.
 */
export class StatusCheckAdapter<Req, Rec> {
  readonly #system: StatusCheckedSystem<Req, Rec>;
  readonly #o: StatusCheckAdapterOptions;
  readonly #logger: Logger;

  constructor(system: StatusCheckedSystem<Req, Rec>, options: StatusCheckAdapterOptions) {
    for (const [name, value] of Object.entries(options.timing)) {
      if (!Number.isFinite(value) || value < 0) throw new RangeError(`timing.${name} must be >= 0`);
    }
    if (options.timing.submitTimeoutMs <= 0) throw new RangeError('timing.submitTimeoutMs must be > 0');
    this.#system = system;
    this.#o = options;
    this.#logger = options.logger ?? silentLogger;
  }

  /**
   * The longest one {@link StatusCheckAdapter.apply} or {@link StatusCheckAdapter.check} takes (plus
   * the margin): use it, plus a little, as the tool's timeout.
   */
  worstCaseMs(): number {
    const t = this.#o.timing;
    return Math.max(t.submitTimeoutMs + t.settleMarginMs, t.lookupTimeoutMs);
  }

  async apply(req: Req, inv: ToolInvocation): Promise<Rec> {
    const t = this.#o.timing;
    const clock = this.#o.clock;
    const notAfterMs = Math.min(inv.effectDeadlineMs ?? Infinity, clock.now() + t.submitTimeoutMs);
    try {
      await this.#o.ledger.noteSend(this.#ledgerKey(req), notAfterMs);
    } catch (err) {
      throw new ToolgateError(
        'DEPENDENCY_UNAVAILABLE',
        'The submission could not be recorded before sending, so it was not sent. Try again shortly.',
        { retryable: true, cause: err },
      );
    }
    // The ledger write took time: a paused process must not send now (the deadline guards too).
    inv.assertLive();
    try {
      // Wait past the deadline by the margin: an answer for a submission recorded just in time.
      return await this.#bounded(notAfterMs - clock.now() + t.settleMarginMs, inv.signal, (s) =>
        this.#system.submit(req, notAfterMs, s),
      );
    } catch (err) {
      const error = classify(err, { nowMs: clock.now() });
      if (DEFINITELY_NOT_APPLIED.has(error.code)) throw error;
      this.#logger.info({ system: this.#o.system, code: error.code }, 'submission unanswered');
      throw new ToolgateError(
        'TIMEOUT',
        'The service did not answer the submission; whether it recorded it is unknown until its status is checked.',
        { cause: error },
      );
    }
  }

  async check(req: Req, inv: ToolInvocation): Promise<CheckAnswer<Rec>> {
    let records: readonly Rec[];
    try {
      records = await this.#bounded(this.#o.timing.lookupTimeoutMs, inv.signal, (s) =>
        this.#system.lookup(req, s),
      );
    } catch {
      return { state: 'unknown' };
    }
    const same = records.find((rec) => this.#system.isSameEffect(req, rec));
    if (same !== undefined) return { state: 'applied', record: same };
    if (records.length > 0) throw this.#system.conflict(req, records);
    let pastDeadline: number | undefined;
    try {
      pastDeadline = await this.#o.ledger.sinceLastDeadline(this.#ledgerKey(req));
    } catch {
      return { state: 'unknown' };
    }
    if (pastDeadline !== undefined && pastDeadline <= this.#o.timing.settleMarginMs)
      return { state: 'unknown' };
    return { state: 'not-applied' };
  }

  /** Runs `work` under its own timeout and the caller's signal (abandoned if it ignores them). */
  async #bounded<T>(ms: number, signal: AbortSignal, work: (s: AbortSignal) => Promise<T>): Promise<T> {
    const scope = attemptScope(signal, Math.max(1, ms), undefined, this.#o.clock);
    try {
      return await raceAbort(
        Promise.resolve().then(() => work(scope.signal)),
        scope.signal,
      );
    } finally {
      scope.dispose();
    }
  }

  #ledgerKey(req: Req): string {
    return `${this.#o.system}:${this.#system.naturalKey(req)}`;
  }
}

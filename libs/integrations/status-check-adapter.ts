import { classify } from '../core/classify.js';
import { ToolgateError } from '../core/errors.js';
import type { ErrorCode } from '../core/errors.js';
import { attemptScope, raceAbort } from '../execution/attempt-scope.js';
import type { Clock } from '../core/clock.js';
import { silentLogger, type Logger } from '../ports/logger.js';
import type { SubmissionLedger } from './submission-ledger.js';

/**
 * A downstream without idempotency keys that can be asked, by a natural key, what it holds.
 * `Req` is one submission; `Rec` what the system stores for it.
 */
export interface StatusCheckedSystem<Req, Rec> {
  /** Everything the system holds under `req`'s natural key (empty when nothing). Read-only. */
  lookup(req: Req, signal: AbortSignal): Promise<readonly Rec[]>;
  /** Whether `rec` is `req`'s effect (same content), not merely something under the same key. */
  isSameEffect(req: Req, rec: Rec): boolean;
  submit(req: Req, signal: AbortSignal): Promise<Rec>;
  /** The refusal when the natural key already holds a different effect (this adapter never amends). */
  conflict(req: Req, existing: readonly Rec[]): ToolgateError;
}

/** Timing of {@link StatusCheckAdapter}. All in ms. */
export interface StatusCheckTiming {
  readonly lookupTimeoutMs: number;
  readonly submitTimeoutMs: number;
  /**
   * The system's commit window — THE assumption this pattern rests on: a submission is committed
   * within this long after it was sent, or never (the system abandons work it could not finish in
   * time). Before it has passed, "not found" proves nothing: the submission may still be in flight.
   */
  readonly commitWindowMs: number;
  /** Added to the window for transit and clock granularity. */
  readonly settleMarginMs: number;
  /** First wait before polling after an unanswered submit; doubles up to `maxPollDelayMs`. */
  readonly firstPollDelayMs: number;
  readonly maxPollDelayMs: number;
  /** Polling stops this long after the send (at least one poll happens after the window). */
  readonly pollBudgetMs: number;
  /** Re-submissions after a send proven absent: 0 or 1. */
  readonly resubmits: 0 | 1;
}

/** How a submission ended up applied. */
export type SubmitPath =
  /** Found under the natural key before sending: not sent again. */
  | 'already-applied'
  /** Sent once, answered. */
  | 'submitted'
  /** Sent, the answer was lost, a status check found it. */
  | 'confirmed-by-status-check'
  /** The first send was proven absent, a second one applied it (answered or found). */
  | 'resubmitted';

export interface SubmitOutcome<Rec> {
  readonly record: Rec;
  readonly path: SubmitPath;
  /** Status lookups made after sends that went unanswered. */
  readonly polls: number;
}

/** A status check's answer for the pipeline or the reconciler; `applied` carries the record. */
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

type PollVerdict<Rec> =
  | { readonly kind: 'found'; readonly record: Rec }
  | { readonly kind: 'absent'; readonly others: readonly Rec[] }
  | { readonly kind: 'unknown' };

/**
 * The status-check pattern for a system without idempotency keys, as one reusable piece.
 *
 * {@link StatusCheckAdapter.submit}:
 * 1. Looks the natural key up first. The same effect already there → returned, NOT sent again
 *    (another call, a crashed attempt or a person filed it). A different effect there → the
 *    system's `conflict` refusal. The lookup failing → SERVER_ERROR "nothing was submitted".
 * 2. Notes the send in the shared ledger, then submits under `submitTimeoutMs`. A refusal or a
 *    request that never left (CALLER_ERROR, RATE_LIMITED, BREAKER_OPEN, …) is rethrown: not applied.
 * 3. Anything else — timeout, connection lost, a 5xx (a legacy system may fail after committing),
 *   a garbled answer — leaves the outcome unknown: the natural key is polled with backoff
 *   (`firstPollDelayMs`, doubling to `maxPollDelayMs`, until `pollBudgetMs` after the send).
 *    Found → applied (`confirmed-by-status-check`). Absent in a lookup that STARTED after the commit
 *    window (plus margin) → definitely not applied.
 * 4. Definitely not applied, with a resubmit left → back to 2, once. This is safe only because of the
 *    commit-window assumption: after the window, the first send can no longer commit, so the second
 *    cannot duplicate it. (Calls for one natural key must also be serialized — the tool's conflict
 *    key does that — or two calls could both see "absent" and both send.) Definitely not applied
 *    with none left → SERVER_ERROR "nothing was filed" (an honest failure: the effect is absent).
 * 5. Polls that never got an answer → TIMEOUT "outcome unknown": never a failure. The pipeline then
 *    asks {@link StatusCheckAdapter.check} once more and, if still unknown, ends UNRESOLVED for the
 *    reconciler, which runs the same check later.
 *
 * {@link StatusCheckAdapter.check} (the tool's `retrySafety.check`): found → applied; lookup failed →
 * unknown; absent while the last noted send for this call is younger than the window → unknown;
 * otherwise not-applied. Read-only; safe from any process that shares the ledger.
 */
export class StatusCheckAdapter<Req, Rec> {
  readonly #system: StatusCheckedSystem<Req, Rec>;
  readonly #o: StatusCheckAdapterOptions;
  readonly #logger: Logger;

  constructor(system: StatusCheckedSystem<Req, Rec>, options: StatusCheckAdapterOptions) {
    const t = options.timing;
    for (const [name, value] of Object.entries(t)) {
      if (!Number.isFinite(value) || value < 0) throw new RangeError(`timing.${name} must be >= 0`);
    }
    if (t.firstPollDelayMs <= 0 || t.maxPollDelayMs < t.firstPollDelayMs) {
      throw new RangeError('poll delays must satisfy 0 < firstPollDelayMs <= maxPollDelayMs');
    }
    this.#system = system;
    this.#o = options;
    this.#logger = options.logger ?? silentLogger;
  }

  /**
   * The longest {@link StatusCheckAdapter.submit} can take: use it (plus a margin) as the tool's
   * timeout, so the pipeline never cuts a poll short inside the commit window.
   */
  worstCaseMs(): number {
    const t = this.#o.timing;
    const round = t.submitTimeoutMs + this.#pollSpanMs() + t.lookupTimeoutMs;
    return t.lookupTimeoutMs + (1 + t.resubmits) * round;
  }

  async submit(
    req: Req,
    callKey: string,
    signal: AbortSignal,
    assertLive: () => void = () => undefined,
  ): Promise<SubmitOutcome<Rec>> {
    const t = this.#o.timing;
    const existing = await this.#lookupBeforeSend(req, signal);
    const same = existing.find((rec) => this.#system.isSameEffect(req, rec));
    if (same !== undefined) return { record: same, path: 'already-applied', polls: 0 };
    if (existing.length > 0) throw this.#system.conflict(req, existing);

    let polls = 0;
    for (let round = 0; round <= t.resubmits; round++) {
      const sentAtMs = await this.#noteSend(callKey);
      let uncertain: ToolgateError;
      try {
        const record = await this.#bounded(t.submitTimeoutMs, signal, (s) => {
          // The submission cannot be deduplicated by the system: never send it late.
          assertLive();
          return this.#system.submit(req, s);
        });
        return { record, path: round === 0 ? 'submitted' : 'resubmitted', polls };
      } catch (err) {
        uncertain = classify(err, { nowMs: this.#o.clock.now() });
        if (DEFINITELY_NOT_APPLIED.has(uncertain.code)) throw uncertain;
      }
      this.#logger.info(
        { system: this.#o.system, round, code: uncertain.code },
        'submission unanswered; checking its status',
      );
      const verdict = await this.#poll(req, sentAtMs, signal, () => (polls += 1));
      if (verdict.kind === 'found') {
        return {
          record: verdict.record,
          path: round === 0 ? 'confirmed-by-status-check' : 'resubmitted',
          polls,
        };
      }
      if (verdict.kind === 'unknown') {
        throw new ToolgateError(
          'TIMEOUT',
          'The service stopped answering and its status could not be checked; the outcome is unknown.',
          { cause: uncertain },
        );
      }
      if (verdict.others.length > 0) throw this.#system.conflict(req, verdict.others);
    }
    throw new ToolgateError(
      'SERVER_ERROR',
      'The service did not record the submission (confirmed by a status check after it stopped answering); nothing was submitted. Try again later.',
      { retryable: true },
    );
  }

  async check(req: Req, callKey: string, signal: AbortSignal): Promise<CheckAnswer<Rec>> {
    let records: readonly Rec[];
    try {
      records = await this.#bounded(this.#o.timing.lookupTimeoutMs, signal, (s) =>
        this.#system.lookup(req, s),
      );
    } catch {
      return { state: 'unknown' };
    }
    const same = records.find((rec) => this.#system.isSameEffect(req, rec));
    if (same !== undefined) return { state: 'applied', record: same };
    let since: number | undefined;
    try {
      since = await this.#o.ledger.sinceLastSend(this.#ledgerKey(callKey));
    } catch {
      return { state: 'unknown' };
    }
    if (since !== undefined && since < this.#windowMs()) return { state: 'unknown' };
    return { state: 'not-applied' };
  }

  async #lookupBeforeSend(req: Req, signal: AbortSignal): Promise<readonly Rec[]> {
    try {
      return await this.#bounded(this.#o.timing.lookupTimeoutMs, signal, (s) => this.#system.lookup(req, s));
    } catch (err) {
      if (signal.aborted) throw err;
      throw new ToolgateError(
        'SERVER_ERROR',
        'The service could not be asked whether this was already submitted, so nothing was submitted. Try again later.',
        { retryable: true, cause: err },
      );
    }
  }

  async #noteSend(callKey: string): Promise<number> {
    try {
      await this.#o.ledger.noteSend(this.#ledgerKey(callKey));
    } catch (err) {
      throw new ToolgateError(
        'DEPENDENCY_UNAVAILABLE',
        'The submission could not be recorded before sending, so it was not sent. Try again shortly.',
        { retryable: true, cause: err },
      );
    }
    return this.#o.clock.now();
  }

  async #poll(
    req: Req,
    sentAtMs: number,
    signal: AbortSignal,
    counted: () => void,
  ): Promise<PollVerdict<Rec>> {
    const t = this.#o.timing;
    const clock = this.#o.clock;
    const windowEndsAt = sentAtMs + this.#windowMs();
    const stopAt = sentAtMs + this.#pollSpanMs();
    let delay = t.firstPollDelayMs;
    for (;;) {
      const now = clock.now();
      if (now >= stopAt) return { kind: 'unknown' };
      await clock.sleep(Math.min(delay, stopAt - now), signal);
      delay = Math.min(delay * 2, t.maxPollDelayMs);
      const startedAt = clock.now();
      let records: readonly Rec[];
      try {
        records = await this.#bounded(t.lookupTimeoutMs, signal, (s) => this.#system.lookup(req, s));
      } catch (err) {
        if (signal.aborted) throw err;
        counted();
        continue;
      }
      counted();
      const same = records.find((rec) => this.#system.isSameEffect(req, rec));
      if (same !== undefined) return { kind: 'found', record: same };
      if (startedAt >= windowEndsAt) return { kind: 'absent', others: records };
    }
  }

  /** Runs `work` under its own timeout and the caller's signal (abandoned if it ignores them). */
  async #bounded<T>(ms: number, signal: AbortSignal, work: (s: AbortSignal) => Promise<T>): Promise<T> {
    const scope = attemptScope(signal, ms, undefined, this.#o.clock);
    try {
      return await raceAbort(
        Promise.resolve().then(() => work(scope.signal)),
        scope.signal,
      );
    } finally {
      scope.dispose();
    }
  }

  #windowMs(): number {
    return this.#o.timing.commitWindowMs + this.#o.timing.settleMarginMs;
  }

  /** How long polling may go on after a send: the budget, but never less than one poll past the window. */
  #pollSpanMs(): number {
    const t = this.#o.timing;
    return Math.max(t.pollBudgetMs, this.#windowMs() + t.maxPollDelayMs);
  }

  #ledgerKey(callKey: string): string {
    return `${this.#o.system}:${callKey}`;
  }
}

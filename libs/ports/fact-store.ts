/**
 * One series of an aggregate fact: the settled contributions of one fact for one group (e.g.
 * "amount refunded on order t1:order:O-5512 by non-managers"). `key` names the series; the caller
 * builds it from the fact's name and its group's values.
 */
export interface FactSeriesQuery {
  readonly key: string;
  /** Only contributions recorded within this many milliseconds before `nowMs` count. */
  readonly windowMs: number;
  /**
   * A call whose own contribution is left out of the sum: the call being judged, so that a
   * redelivery of a call that already counted is judged as it was the first time.
   */
  readonly exceptCallId?: string;
}

/** One settled call's contribution to one series. */
export interface FactContribution {
  readonly key: string;
  /**
   * The call it came from: a series holds at most one contribution per call. The pipeline uses the
   * call's idempotency key, which a redelivery and a retry of the same logical call share.
   */
  readonly callId: string;
  /**
   * The amount, as a safe integer in the fact's units (ten-thousandths for sums, so 49.99 is
   * 499900; 1 per call for counts). May be zero or negative (a sum over a signed field).
   */
  readonly units: number;
  /** When the call's effect settled (the pipeline clock); the window is measured from it. */
  readonly atMs: number;
  /** The series' window; contributions older than it may be dropped from now on. */
  readonly windowMs: number;
}

/**
 * Where the aggregate facts of business rules live, shared by every executor using the same backing
 * store.
 *
 * Contract:
 * - `sum` has no side effects: it answers, for each query in order, the sum of the units of the
 *   series' contributions with `atMs > nowMs - windowMs`, except the one of `exceptCallId` (0 for a
 *   series never recorded). It never
 *   trims, so a read can be repeated, audited and replayed.
 * - `record` adds each contribution at most once per (key, callId): recording the same call again
 *   (a redelivery, a retried write) changes nothing. It may drop contributions that fell out of
 *   their series' window. Resolves once every contribution is durable in the store.
 * - Both throw when the store is unreachable; callers decide (the pipeline refuses before a call
 *   runs, and counts a lost contribution after).
 */
export interface FactStore {
  sum(queries: readonly FactSeriesQuery[], nowMs: number): Promise<number[]>;
  record(contributions: readonly FactContribution[]): Promise<void>;
}

import type { FactContribution, FactSeriesQuery, FactStore } from '../../ports/fact-store.js';
import { settle } from '../../core/settle.js';
import { deleteWhere } from './delete-where.js';
import { checkFactContributions, checkFactQueries } from './fact-arguments.js';

/** One series: its contributions by call id, and the window it was last recorded with. */
interface Series {
  readonly contributions: Map<string, { readonly units: number; readonly atMs: number }>;
  windowMs: number;
}

/**
 * Aggregate facts held in this process: the embedded default (demo, single executor, tests). Sums
 * are per instance, not shared across processes; use the Redis store for that.
 *
 * Each method runs synchronously to completion before its promise settles, so concurrent records of
 * one call never both add. Times are the ones given (`nowMs`, `atMs`): the store reads no clock.
 * `record` drops a series' contributions that fell out of the window of the contribution being
 * recorded; {@link MemoryFactStore.purgeIdle} drops whole idle series. See {@link FactStore} for the
 * contract.
 */
export class MemoryFactStore implements FactStore {
  readonly #series = new Map<string, Series>();

  sum(queries: readonly FactSeriesQuery[], nowMs: number): Promise<number[]> {
    return settle(() =>
      checkFactQueries(queries, nowMs).map(({ key, afterMs, exceptCallId }) => {
        let total = 0;
        for (const [callId, { units, atMs }] of this.#series.get(key)?.contributions ?? []) {
          if (atMs > afterMs && callId !== exceptCallId) total += units;
        }
        return total;
      }),
    );
  }

  record(contributions: readonly FactContribution[]): Promise<void> {
    return settle(() => {
      for (const { key, callId, units, atMs, windowMs, dropUpToMs } of checkFactContributions(
        contributions,
      )) {
        let series = this.#series.get(key);
        if (series === undefined) {
          series = { contributions: new Map(), windowMs };
          this.#series.set(key, series);
        }
        series.windowMs = windowMs;
        if (!series.contributions.has(callId)) series.contributions.set(callId, { units, atMs });
        deleteWhere(series.contributions, (c) => c.atMs <= dropUpToMs);
        if (series.contributions.size === 0) this.#series.delete(key);
      }
    });
  }

  /**
   * Drops every contribution that is at least its series' window old at `nowMs` (the window the series
   * was last recorded with), and the series left empty, so a long-running process does not keep every
   * series forever. A later `sum` at an earlier `nowMs` no longer sees them. Returns how many
   * contributions were dropped.
   */
  purgeIdle(nowMs: number): number {
    let dropped = 0;
    for (const [key, series] of this.#series) {
      dropped += deleteWhere(series.contributions, (c) => c.atMs <= nowMs - series.windowMs);
      if (series.contributions.size === 0) this.#series.delete(key);
    }
    return dropped;
  }
}

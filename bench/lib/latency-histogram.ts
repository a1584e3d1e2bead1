/** HDR histograms of durations recorded in microseconds, summarized in milliseconds. */
import * as hdr from 'hdr-histogram-js';

export type Histogram = hdr.Histogram;

/** A histogram of 1 µs … 10 min at 3 significant digits (values beyond are clamped to the top). */
export function newHistogram(): Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 600_000_000,
    numberOfSignificantValueDigits: 3,
  });
}

/** Records a duration given in milliseconds. */
export function recordMs(h: Histogram, ms: number): void {
  h.recordValue(Math.min(600_000_000, Math.max(1, Math.round(ms * 1000))));
}

/** Percentiles of a histogram, in milliseconds. */
export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

export function summarize(h: Histogram): LatencySummary {
  return {
    count: h.totalCount,
    p50: h.getValueAtPercentile(50) / 1000,
    p99: h.getValueAtPercentile(99) / 1000,
    p999: h.getValueAtPercentile(99.9) / 1000,
    max: h.maxValue / 1000,
  };
}

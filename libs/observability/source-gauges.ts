import { Counter, Gauge, type Registry } from 'prom-client';
import type { BreakerState } from '../execution/breakers.js';
import type { CaseState } from '../ports/case-store.js';
import type { ConsumerLagReader } from './consumer-lag.js';
import { BREAKER_STATE_VALUE, CASE_STATES } from './metric-labels.js';

/** A number per reconciliation case state; only the states present are reported. */
export type PerCaseState = Partial<Readonly<Record<CaseState, number>>>;

/** One reading of the reconciliation case store, taken at scrape time. */
export interface CaseCounts {
  /** Cases per state (a reader may count just the unfinished ones); other keys are ignored. */
  readonly counts: PerCaseState;
  /**
   * Seconds since the oldest case of each state was created, measured when the reader ran. A state
   * with no case is left out, so its age gauge has no sample (never 0, which would read as "a case
   * that just arrived").
   */
  readonly oldestAgeSeconds?: PerCaseState;
}

/** Reads {@link CaseCounts}; called once per scrape, rejects when the store does. */
export type CaseCountReader = () => Promise<CaseCounts>;

/** Where the scrape-time gauges read from; a service passes the ones it has. */
export interface MetricSources {
  /** Breaker state per downstream (`ManagedCircuitBreakers.states`). */
  readonly breakerStates?: () => ReadonlyMap<string, BreakerState>;
  /** Reconciliation case counts and oldest-case ages per state (one read feeds both gauges). */
  readonly caseCounts?: CaseCountReader;
  /** Consumer lag per topic partition (see consumer-lag.ts). */
  readonly consumerLag?: ConsumerLagReader;
  /** Longest a scrape waits for a source before reporting it failed (default 2000 ms). */
  readonly sourceTimeoutMs?: number;
}

/**
 * Registers the gauges computed at scrape time — `toolgate_circuit_breaker_state{downstream}`,
 * `toolgate_reconciliation_cases{state}`, `toolgate_reconciliation_oldest_case_age_seconds{state}`,
 * `toolgate_consumer_lag_messages{group,topic,partition}` — and `toolgate_metrics_source_errors_total{source}`.
 * The two case gauges share one read of `caseCounts` per scrape (one query, one error count).
 *
 * Each gauge is reset before it reads, so a downstream or partition that disappears stops being
 * reported. A source that throws or exceeds `sourceTimeoutMs` leaves its gauge empty for that
 * scrape and counts one error; the scrape itself still succeeds. A gauge whose source is absent is
 * declared but has no samples. The error counter includes the failures of the scrape it is part of.
 */
export function registerSourceGauges(registry: Registry, sources: MetricSources): void {
  const registers = [registry];
  const timeoutMs = sources.sourceTimeoutMs ?? 2000;
  // Reads of the current scrape, so the error counter (collected after the gauges) includes them.
  const reading = new Set<Promise<void>>();
  const fromSource = <T>(source: string, read: () => T | Promise<T>, use: (v: T) => void): Promise<void> => {
    const done = withTimeout(read, timeoutMs)
      .then(use)
      .catch(() => {
        sourceErrors.inc({ source });
      });
    const tracked = done.finally(() => reading.delete(tracked));
    reading.add(tracked);
    return tracked;
  };

  new Gauge({
    name: 'toolgate_circuit_breaker_state',
    help: 'Circuit breaker state per downstream: 0 closed, 1 half-open, 2 open.',
    labelNames: ['downstream'] as const,
    registers,
    async collect() {
      this.reset();
      const read = sources.breakerStates;
      if (read === undefined) return;
      await fromSource('breakers', read, (states) => {
        for (const [downstream, state] of states) {
          const value = BREAKER_STATE_VALUE[state];
          if (value !== undefined) this.set({ downstream }, value);
        }
      });
    },
  });
  // Both case gauges are filled from one read; the count gauge (collected first) starts it and the
  // age gauge awaits the same promise, so a scrape queries the store once.
  let caseRead: Promise<CaseCounts | undefined> | undefined;
  const readCases = (): Promise<CaseCounts | undefined> => {
    const read = sources.caseCounts;
    if (read === undefined) return Promise.resolve(undefined);
    let got: CaseCounts | undefined;
    const pending = fromSource('cases', read, (v) => {
      got = v;
    }).then(() => got);
    caseRead = pending;
    void pending.finally(() => {
      if (caseRead === pending) caseRead = undefined;
    });
    return pending;
  };
  const setPerState = (gauge: Gauge<'state'>, values: PerCaseState | undefined): void => {
    if (values === undefined) return;
    for (const state of CASE_STATES) {
      if (values[state] !== undefined) gauge.set({ state }, finiteOrZero(values[state]));
    }
  };
  new Gauge({
    name: 'toolgate_reconciliation_cases',
    help: 'Reconciliation cases per state (open and needs_manual are the unfinished ones).',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      this.reset();
      setPerState(this, (await readCases())?.counts);
    },
  });
  new Gauge({
    name: 'toolgate_reconciliation_oldest_case_age_seconds',
    help: 'Age of the oldest case per unfinished state, at scrape time; no sample when there is none.',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      this.reset();
      setPerState(this, (await (caseRead ?? readCases()))?.oldestAgeSeconds);
    },
  });
  new Gauge({
    name: 'toolgate_consumer_lag_messages',
    help: 'Messages of a partition not yet committed by the consumer group.',
    labelNames: ['group', 'topic', 'partition'] as const,
    registers,
    async collect() {
      this.reset();
      const read = sources.consumerLag;
      if (read === undefined) return;
      await fromSource('consumer_lag', read, (lags) => {
        for (const { group, topic, partition, lag } of lags) {
          this.set({ group, topic, partition: String(partition) }, finiteOrZero(lag));
        }
      });
    },
  });
  // Registered after the gauges: prom-client starts collectors in registration order.
  const sourceErrors = new Counter({
    name: 'toolgate_metrics_source_errors_total',
    help: 'Scrapes in which a metrics source failed or timed out; its gauge was left empty.',
    labelNames: ['source'] as const,
    registers,
    async collect() {
      await Promise.all([...reading]);
    },
  });
}

/** A count or duration as a metric value: finite and non-negative, anything else 0. */
export function finiteOrZero(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}

/** Resolves with `read()`'s value, or rejects once `ms` passed; the timer never keeps the process up. */
async function withTimeout<T>(read: () => T | Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      Promise.resolve().then(read),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`metrics source timed out after ${ms} ms`)), ms);
        timer.unref();
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

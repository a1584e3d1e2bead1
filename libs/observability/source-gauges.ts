import { Counter, Gauge, type Registry } from 'prom-client';
import type { BreakerState } from '../execution/breakers.js';
import type { CaseState } from '../ports/case-store.js';
import type { ConsumerLagReader } from './consumer-lag.js';
import { BREAKER_STATE_VALUE, CASE_STATES } from './metric-labels.js';

/**
 * Counts of reconciliation cases per state. Only the states present are reported (a reader may
 * count just the unfinished ones); keys that are not case states are ignored.
 */
export type CaseCountReader = () => Promise<Partial<Readonly<Record<CaseState, number>>>>;

/** Where the scrape-time gauges read from; a service passes the ones it has. */
export interface MetricSources {
  /** Breaker state per downstream (`ManagedCircuitBreakers.states`). */
  readonly breakerStates?: () => ReadonlyMap<string, BreakerState>;
  /** Reconciliation case counts per state. */
  readonly caseCounts?: CaseCountReader;
  /** Consumer lag per topic partition (see consumer-lag.ts). */
  readonly consumerLag?: ConsumerLagReader;
  /** Longest a scrape waits for a source before reporting it failed (default 2000 ms). */
  readonly sourceTimeoutMs?: number;
}

/**
 * Registers the gauges computed at scrape time — `toolgate_circuit_breaker_state{downstream}`,
 * `toolgate_reconciliation_cases{state}`, `toolgate_consumer_lag_messages{topic,partition}` — and
 * `toolgate_metrics_source_errors_total{source}`.
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
  new Gauge({
    name: 'toolgate_reconciliation_cases',
    help: 'Reconciliation cases per state (open and needs_manual are the unfinished ones).',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      this.reset();
      const read = sources.caseCounts;
      if (read === undefined) return;
      await fromSource('cases', read, (counts) => {
        for (const state of CASE_STATES) {
          if (counts[state] !== undefined) this.set({ state }, finiteOrZero(counts[state]));
        }
      });
    },
  });
  new Gauge({
    name: 'toolgate_consumer_lag_messages',
    help: 'Messages of a partition not yet committed by the consumer group.',
    labelNames: ['topic', 'partition'] as const,
    registers,
    async collect() {
      this.reset();
      const read = sources.consumerLag;
      if (read === undefined) return;
      await fromSource('consumer_lag', read, (lags) => {
        for (const { topic, partition, lag } of lags) {
          this.set({ topic, partition: String(partition) }, finiteOrZero(lag));
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

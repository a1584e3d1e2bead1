import { JobFailure, type JobHandler } from '../../../libs/patterns/jobs/job-runner.js';
import type { JobRecord } from '../../../libs/ports/job-store.js';
import type { PaymentsApi, RefundReceipt } from '../../downstreams/payments/payments-api.js';
import { centsToDollars } from '../money.js';

/** The reports a job can produce. */
export const REPORT_TYPES = ['refunds_by_reason', 'refunds_by_order'] as const;
export type ReportType = (typeof REPORT_TYPES)[number];

/** What a report job is asked for: one report over an inclusive range of UTC dates. */
export interface ReportParams {
  readonly report_type: ReportType;
  /** YYYY-MM-DD, inclusive. */
  readonly from: string;
  readonly to: string;
}

/** One row of a report: a group, how many refunds fell in it, and their sum in dollars. */
export interface ReportRow {
  readonly key: string;
  readonly count: number;
  readonly amount: number;
}

/** A finished report. `as_of` is the submission time: later refunds are not in it. */
export interface Report {
  readonly report_type: ReportType;
  readonly from: string;
  readonly to: string;
  readonly as_of: string;
  readonly currency: 'USD';
  readonly rows: readonly ReportRow[];
  readonly total_count: number;
  readonly total_amount: number;
}

/** Rows kept in a result; the rest are summed into the totals only (a bounded result). */
export const MAX_REPORT_ROWS = 50;

const DAY_MS = 86_400_000;

/** Days in the inclusive range; NaN when a date does not parse. */
export function rangeDays(params: Pick<ReportParams, 'from' | 'to'>): number {
  return (Date.parse(`${params.to}T00:00:00Z`) - Date.parse(`${params.from}T00:00:00Z`)) / DAY_MS + 1;
}

/**
 * The simulated timeline of a report: 2 s in the queue, then 30 s plus 0.1 s per day of range, at
 * most 60 s of running (the "typical run 30–60 s" the tool descriptions promise).
 */
export function reportPlan(params: ReportParams): { queuedMs: number; runMs: number } {
  const days = Math.max(1, Math.min(366, rangeDays(params) || 1));
  return { queuedMs: 2_000, runMs: Math.min(60_000, 30_000 + days * 100) };
}

/**
 * Groups the tenant's refunds in the range by `keyOf`, counting only refunds made before the job
 * was submitted, so every executor assembling the report gets the same one. Largest amount first,
 * ties by key.
 */
function refundReport(
  type: ReportType,
  keyOf: (refund: RefundReceipt) => string,
  payments: PaymentsApi,
): JobHandler<ReportParams, Report> {
  return {
    kind: `report:${type}`,
    plan: reportPlan,
    async produce(params: ReportParams, job: JobRecord): Promise<Report> {
      const fromMs = Date.parse(`${params.from}T00:00:00Z`);
      const toMs = Date.parse(`${params.to}T00:00:00Z`) + DAY_MS;
      if (!Number.isFinite(fromMs) || !Number.isFinite(toMs)) {
        throw new JobFailure('The report range is not a valid pair of dates.');
      }
      const refunds = (await payments.ledger({ tenant: job.tenant })).filter((r) => {
        const at = Date.parse(r.created_at);
        return at >= fromMs && at < toMs && at <= job.submittedAtMs;
      });
      const groups = new Map<string, { count: number; cents: number }>();
      for (const r of refunds) {
        const g = groups.get(keyOf(r)) ?? { count: 0, cents: 0 };
        groups.set(keyOf(r), { count: g.count + 1, cents: g.cents + r.amount_cents });
      }
      const rows = [...groups.entries()]
        .sort(([ka, a], [kb, b]) => b.cents - a.cents || (ka < kb ? -1 : ka > kb ? 1 : 0))
        .slice(0, MAX_REPORT_ROWS)
        .map(([key, g]) => ({ key, count: g.count, amount: centsToDollars(g.cents) }));
      return {
        report_type: type,
        from: params.from,
        to: params.to,
        as_of: new Date(job.submittedAtMs).toISOString(),
        currency: 'USD',
        rows,
        total_count: refunds.length,
        total_amount: centsToDollars(refunds.reduce((sum, r) => sum + r.amount_cents, 0)),
      };
    },
  };
}

/** The report handlers, one per {@link REPORT_TYPES} entry, reading the payment ledger. */
export function reportHandlers(payments: PaymentsApi): JobHandler[] {
  return [
    refundReport('refunds_by_reason', (r) => r.reason, payments),
    refundReport('refunds_by_order', (r) => r.order_id, payments),
  ] as JobHandler[];
}

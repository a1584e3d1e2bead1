import { z } from 'zod';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { JobRunner } from '../../../libs/patterns/jobs/job-runner.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { REPORT_TYPES, rangeDays } from './report-job-reports.js';
import {
  CHECK_JOB_STATUS,
  POLLING_GUIDANCE,
  SUBMIT_REPORT_JOB,
  statusFields,
  statusOutputFields,
} from './report-job-shared.js';

/** Whether `s` (YYYY-MM-DD) names a real day: Date.parse alone rolls 2026-02-30 over to March. */
function isCalendarDate(s: string): boolean {
  const ms = Date.parse(`${s}T00:00:00Z`);
  return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === s;
}

const date = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .refine(isCalendarDate, 'must be a real calendar date');

const input = z.strictObject({
  report_type: z
    .enum(REPORT_TYPES)
    .describe("'refunds_by_reason' (count and sum of refunds per reason) or 'refunds_by_order' (per order)."),
  from: date.describe('First day of the report, YYYY-MM-DD (UTC), inclusive.'),
  to: date.describe('Last day of the report, YYYY-MM-DD (UTC), inclusive; at most 366 days after from.'),
});

const output = z.object({ ...statusOutputFields, estimated_seconds: z.number() });

export type SubmitReportJobInput = z.infer<typeof input>;
export type SubmitReportJobOutput = z.infer<typeof output>;

/**
 * `submit_report_job` (state-changing, idempotent): records a report job and returns its job id at
 * once; nothing runs inside the call. The job store deduplicates on the call's idempotency key, so a
 * retried or redelivered submit returns the same job id (retry safety `forwards-key`), while two
 * separate requests for the same report are two jobs.
 */
export function submitReportJobTool(
  runner: JobRunner,
): ToolDefinition<SubmitReportJobInput, SubmitReportJobOutput> {
  return defineTool({
    name: SUBMIT_REPORT_JOB,
    version: '1.0.0',
    description: `Start a refund report over a date range. Returns a job_id immediately; the report is NOT ready yet. Then call ${CHECK_JOB_STATUS} with that job_id until its status is 'succeeded', and fetch the report with get_job_result. ${POLLING_GUIDANCE} Call this once per report the user asked for; do not resubmit while a job is running.`,
    input,
    output,
    scopes: ['reports:read'],
    owner: 'finance-team',
    stateChanging: true,
    retrySafety: { kind: 'forwards-key' },
    retry: { maxAttempts: 2, baseDelayMs: 200, maxDelayMs: 1_000 },
    downstream: 'reports',
    timeoutMs: 2_000,
    auditFields: ['report_type', 'from', 'to'],
    rateLimit: { capacity: 5, refillPerSecond: 0.1, per: ['principal'] },
    cost: { tokensIn: 50, tokensOut: 50 },
    execute: async (args, inv) => {
      const days = rangeDays(args);
      if (!(days >= 1 && days <= 366)) {
        throw new ToolgateError(
          'CALLER_ERROR',
          `The range ${args.from} to ${args.to} is not 1 to 366 days long.`,
          {
            suggestedFix: "Give 'from' on or before 'to', at most 366 days apart.",
          },
        );
      }
      const { view } = await runner.submit({
        tenant: inv.ctx.tenant,
        submissionKey: inv.idempotencyKey,
        kind: `report:${args.report_type}`,
        params: args,
        submittedBy: inv.ctx.principal.id,
        ...(inv.ctx.principal.onBehalfOf === undefined ? {} : { onBehalfOf: inv.ctx.principal.onBehalfOf }),
      });
      return { ...statusFields(view), estimated_seconds: Math.ceil(view.remainingMs / 1000) };
    },
  });
}

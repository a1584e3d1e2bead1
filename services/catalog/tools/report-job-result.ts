import { z } from 'zod';
import { ToolgateError } from '../../../libs/core/errors.js';
import { notReadyError } from '../../../libs/patterns/jobs/not-ready-error.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { REPORT_TYPES, type Report } from './report-job-reports.js';
import {
  CHECK_JOB_STATUS,
  GET_JOB_RESULT,
  POLLING_GUIDANCE,
  jobLookupInput,
  jobReadFields,
  ownJob,
  type ReportJobContext,
} from './report-job-shared.js';

const input = jobLookupInput;

const output = z.object({
  job_id: z.string(),
  report_type: z.enum(REPORT_TYPES),
  from: z.string(),
  to: z.string(),
  as_of: z.string(),
  currency: z.literal('USD'),
  rows: z.array(z.object({ key: z.string(), count: z.number(), amount: z.number() })),
  total_count: z.number(),
  total_amount: z.number(),
});

export type GetJobResultInput = z.infer<typeof input>;
export type GetJobResultOutput = z.infer<typeof output>;

/**
 * `get_job_result` (read-only): the finished report. Before the job is done it refuses with
 * "not ready, poll again in N s" (CALLER_ERROR, retryable, `retryAfterMs`), so a model that asks too
 * early learns when to come back instead of getting an empty report.
 */
export function getJobResultTool(
  jobs: ReportJobContext,
): ToolDefinition<GetJobResultInput, GetJobResultOutput> {
  return defineTool({
    name: GET_JOB_RESULT,
    version: '1.0.0',
    description: `Fetch the report of a job whose ${CHECK_JOB_STATUS} status is 'succeeded'. ${POLLING_GUIDANCE} Asking earlier returns "not ready" with how long to wait.`,
    input,
    output,
    ...jobReadFields,
    timeoutMs: 5_000,
    maxResultBytes: 16_384,
    cost: { tokensIn: 30, tokensOut: 600 },
    execute: async (args, inv) => {
      await ownJob(jobs.jobs, args.job_id, inv.ctx);
      const answer = (await jobs.runner.result(inv.ctx.tenant, args.job_id, inv.signal))!;
      if (answer.kind === 'not-ready') throw notReadyError(answer.view, CHECK_JOB_STATUS);
      if (answer.kind === 'failed') {
        throw new ToolgateError(
          'CALLER_ERROR',
          `Job ${args.job_id} failed: ${answer.view.error ?? 'no reason given'}.`,
          {
            retryable: false,
            suggestedFix: 'Tell the user; submit a new job only if they ask again.',
          },
        );
      }
      const report = answer.result as Report;
      return { job_id: args.job_id, ...report, rows: report.rows.map((row) => ({ ...row })) };
    },
  });
}

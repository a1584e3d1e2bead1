import { z } from 'zod';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import {
  CHECK_JOB_STATUS,
  GET_JOB_RESULT,
  POLLING_GUIDANCE,
  SUBMIT_REPORT_JOB,
  jobLookupInput,
  jobReadFields,
  ownJob,
  statusFields,
  statusOutputFields,
  type ReportJobContext,
} from './report-job-shared.js';

const input = jobLookupInput;
const output = z.object({ ...statusOutputFields, error: z.string().nullable() });

export type CheckJobStatusInput = z.infer<typeof input>;
export type CheckJobStatusOutput = z.infer<typeof output>;

/**
 * `check_job_status` (read-only): where a job submitted by this principal stands — queued, running
 * with progress, succeeded or failed — and when to poll again. The cadence is the description's and
 * `poll_after_seconds`' job: a model that polls early still pays for each answer in tokens, so
 * refusing it would save nothing. The rate limit only stops a runaway loop; it is per principal, and
 * one agent principal serves many users, so it is sized for all of them rather than for one job.
 */
export function checkJobStatusTool(
  jobs: ReportJobContext,
): ToolDefinition<CheckJobStatusInput, CheckJobStatusOutput> {
  return defineTool({
    name: CHECK_JOB_STATUS,
    version: '1.0.0',
    description: `Check a job started with ${SUBMIT_REPORT_JOB}. ${POLLING_GUIDANCE} Wait poll_after_seconds before checking again; when status is 'succeeded' call ${GET_JOB_RESULT}, when 'failed' tell the user the error.`,
    input,
    output,
    ...jobReadFields,
    timeoutMs: 2_000,
    rateLimit: { capacity: 30, refillPerSecond: 5, per: ['principal'] },
    cost: { tokensIn: 30, tokensOut: 40 },
    execute: async (args, inv) => {
      await ownJob(jobs.jobs, args.job_id, inv.ctx);
      const view = (await jobs.runner.status(inv.ctx.tenant, args.job_id, inv.signal))!;
      return { ...statusFields(view), error: view.error ?? null };
    },
  });
}

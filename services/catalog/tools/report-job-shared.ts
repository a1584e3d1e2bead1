import { z } from 'zod';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { ExecutionContext } from '../../../libs/core/types.js';
import type { JobRunner } from '../../../libs/patterns/jobs/job-runner.js';
import type { JobView } from '../../../libs/patterns/jobs/job-view.js';
import type { Clock } from '../../../libs/core/clock.js';
import type { JobRecord, JobStore } from '../../../libs/ports/job-store.js';
import type { PaymentsApi } from '../../downstreams/payments/payments-api.js';

export const SUBMIT_REPORT_JOB = 'submit_report_job';
export const CHECK_JOB_STATUS = 'check_job_status';
export const GET_JOB_RESULT = 'get_job_result';

/** The cadence every report tool states, so a model does not poll every turn. */
export const POLLING_GUIDANCE = 'Poll no more than every 5 s; a typical run takes 30–60 s.';

/** What the report tools need. */
export interface ReportJobToolDeps {
  readonly jobs: JobStore;
  /** The payment ledger the refund reports read. */
  readonly payments: PaymentsApi;
  readonly clock: Clock;
}

/** What the status and result tools share: the runner and the store it runs over. */
export interface ReportJobContext {
  readonly jobs: JobStore;
  readonly runner: JobRunner;
}

export const jobIdField = z
  .string()
  .regex(/^job_[0-9a-f-]{36}$/)
  .describe('The job_id exactly as submit_report_job returned it.');

/** Input of the tools that read one job (`check_job_status`, `get_job_result`). */
export const jobLookupInput = z.strictObject({ job_id: jobIdField });

/**
 * The definition fields the job-reading tools share: read-only, on the reports downstream, audited by
 * job id; each tool adds its own timeout, limits and cost.
 */
export const jobReadFields = {
  scopes: ['reports:read'],
  owner: 'finance-team',
  stateChanging: false,
  downstream: 'reports',
  auditFields: ['job_id'],
} as const;

/**
 * The caller's job, or CALLER_ERROR "no such job" — the same answer for an unknown id, another
 * tenant's job and a job someone else submitted, so ids of others' jobs reveal nothing.
 */
export async function ownJob(jobs: JobStore, jobId: string, ctx: ExecutionContext): Promise<JobRecord> {
  const job = await jobs.get(ctx.tenant, jobId);
  if (
    job === undefined ||
    job.submittedBy !== ctx.principal.id ||
    job.onBehalfOf !== ctx.principal.onBehalfOf
  ) {
    throw new ToolgateError('CALLER_ERROR', `There is no job ${jobId} of yours.`, {
      retryable: false,
      suggestedFix: 'Use a job_id that submit_report_job returned in this conversation.',
    });
  }
  return job;
}

/** The status fields every report tool answers with, in the units the model reads. */
export function statusFields(view: JobView) {
  return {
    job_id: view.jobId,
    status: view.state,
    progress_percent: Math.floor(view.progress * 100),
    estimated_seconds_left: Math.ceil(view.remainingMs / 1000),
    poll_after_seconds: view.pollAfterMs === undefined ? null : Math.ceil(view.pollAfterMs / 1000),
  };
}

export const statusOutputFields = {
  job_id: z.string(),
  status: z.enum(['queued', 'running', 'succeeded', 'failed']),
  progress_percent: z.number(),
  estimated_seconds_left: z.number(),
  poll_after_seconds: z.number().nullable(),
};

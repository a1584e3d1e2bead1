import { JobRunner } from '../../../libs/patterns/jobs/job-runner.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { reportHandlers } from './report-job-reports.js';
import { getJobResultTool } from './report-job-result.js';
import type { ReportJobToolDeps } from './report-job-shared.js';
import { checkJobStatusTool } from './report-job-status.js';
import { submitReportJobTool } from './report-job-submit.js';

/**
 * The report-job trio: `submit_report_job` returns a job id at once,
 * `check_job_status` polls it, `get_job_result` retrieves the report when done. They share one
 * JobRunner over `deps.jobs`; register all three or none.
 */
export function reportJobTools(deps: ReportJobToolDeps): ToolDefinition[] {
  const runner = new JobRunner(deps.jobs, deps.clock, reportHandlers(deps.payments));
  const context = { jobs: deps.jobs, runner };
  return [
    submitReportJobTool(runner),
    checkJobStatusTool(context),
    getJobResultTool(context),
  ] as ToolDefinition[];
}

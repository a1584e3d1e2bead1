/** Long-running jobs: submit returns at once, poll a time-based state machine, retrieve when done. */
export { MIN_POLL_INTERVAL_MS, MAX_POLL_INTERVAL_MS, pollAfterMs } from './poll-cadence.js';
export { viewJob, type JobState, type JobView } from './job-view.js';
export { JobRunner, JobFailure, type JobHandler, type JobSubmission, type JobResult } from './job-runner.js';
export { notReadyError } from './not-ready-error.js';

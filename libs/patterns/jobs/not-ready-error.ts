import { ToolgateError } from '../../core/errors.js';
import type { JobView } from './job-view.js';
import { MIN_POLL_INTERVAL_MS } from './poll-cadence.js';

/**
 * The model-readable answer to "give me the result" before the job is done: CALLER_ERROR, retryable,
 * with `retryAfterMs` set to the job's poll interval and a message saying its state, progress and
 * "poll again in N s". `statusTool` names the tool to poll with. Applies nothing.
 */
export function notReadyError(view: JobView, statusTool: string): ToolgateError {
  const waitMs = view.pollAfterMs ?? MIN_POLL_INTERVAL_MS;
  const seconds = Math.ceil(waitMs / 1000);
  const where = view.state === 'queued' ? 'queued' : `running, ${Math.floor(view.progress * 100)}% done`;
  return new ToolgateError(
    'CALLER_ERROR',
    `Job ${view.jobId} is not ready yet (${where}); poll again in ${seconds} s.`,
    {
      retryable: true,
      retryAfterMs: waitMs,
      suggestedFix: `Wait ${seconds} s, then call ${statusTool}; fetch the result only once its status is 'succeeded'.`,
    },
  );
}

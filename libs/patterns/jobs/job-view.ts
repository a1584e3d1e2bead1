import type { JobRecord } from '../../ports/job-store.js';
import { pollAfterMs } from './poll-cadence.js';

/** A job's state as a caller sees it. */
export type JobState = 'queued' | 'running' | 'succeeded' | 'failed';

/** A job at one instant: its state, progress and when to look again. */
export interface JobView {
  readonly jobId: string;
  readonly kind: string;
  readonly state: JobState;
  /** 0 while queued, rising to 1 while running, 1 once finished. */
  readonly progress: number;
  readonly submittedAtMs: number;
  /** When the run is expected to end (the simulated timeline's end). */
  readonly readyAtMs: number;
  /** Estimated time left, 0 once finished. */
  readonly remainingMs: number;
  /** While unfinished: when to poll again (see `pollAfterMs`). */
  readonly pollAfterMs?: number;
  /** Present once failed: a message safe to show. */
  readonly error?: string;
  readonly finishedAtMs?: number;
}

/**
 * The time-based state machine of a job: queued for `queuedMs` after submission, then running for
 * `runMs` with progress rising linearly, then finished once an outcome is recorded. A job whose run
 * time has passed but has no outcome yet reads as running at progress 1 ("finishing") until its
 * runner records one. Pure: a function of the record and `nowMs`, so every executor reading the
 * same record at the same time sees the same state.
 */
export function viewJob(job: JobRecord, nowMs: number): JobView {
  const startAtMs = job.submittedAtMs + job.queuedMs;
  const readyAtMs = startAtMs + job.runMs;
  const base = { jobId: job.jobId, kind: job.kind, submittedAtMs: job.submittedAtMs, readyAtMs };
  if (job.outcome !== undefined) {
    return {
      ...base,
      state: job.outcome.state,
      progress: 1,
      remainingMs: 0,
      finishedAtMs: job.outcome.finishedAtMs,
      ...(job.outcome.state === 'failed' ? { error: job.outcome.error } : {}),
    };
  }
  const remainingMs = Math.max(0, readyAtMs - nowMs);
  if (nowMs < startAtMs) {
    return { ...base, state: 'queued', progress: 0, remainingMs, pollAfterMs: pollAfterMs(remainingMs) };
  }
  const progress = job.runMs <= 0 ? 1 : Math.min(1, (nowMs - startAtMs) / job.runMs);
  return { ...base, state: 'running', progress, remainingMs, pollAfterMs: pollAfterMs(remainingMs) };
}

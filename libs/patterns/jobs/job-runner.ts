import { classify } from '../../core/classify.js';
import type { Clock } from '../../core/clock.js';
import type { JobRecord, JobStore, NewJob } from '../../ports/job-store.js';
import { viewJob, type JobView } from './job-view.js';

/**
 * Thrown by a handler for a job that can never succeed (bad parameters found late, data gone): the
 * job is recorded as failed with `message` (shown to the model, so keep it free of secrets).
 * Anything else a handler throws is treated as passing trouble: nothing is recorded and the next
 * look tries again.
 */
export class JobFailure extends Error {
  override readonly name = 'JobFailure';
}

/** One kind of job: how long it takes and how its result is assembled. */
export interface JobHandler<P = unknown, R = unknown> {
  readonly kind: string;
  /** The job's timeline for these parameters. Pure. */
  plan(params: P): { readonly queuedMs: number; readonly runMs: number };
  /**
   * Assembles the result once the timeline has passed. Should be deterministic for a job (read data
   * as of `job.submittedAtMs`), since two executors may both assemble it and the first to record
   * wins; must honour `signal`.
   */
  produce(params: P, job: JobRecord, signal: AbortSignal): Promise<R>;
}

/** A submission as a tool makes it: the job as stored, less its timeline (the runner sets that). */
export type JobSubmission = Omit<NewJob, 'submittedAtMs' | 'queuedMs' | 'runMs'>;

/** A job's result, or why there is none yet. */
export type JobResult =
  | { readonly kind: 'ready'; readonly view: JobView; readonly result: unknown }
  | { readonly kind: 'not-ready'; readonly view: JobView }
  | { readonly kind: 'failed'; readonly view: JobView };

/**
 * Submit / poll / retrieve for long-running jobs, over a {@link JobStore} and a Clock.
 *
 * `submit` only records the job and returns at once: nothing runs inside the submitting call. The
 * job then progresses by the time-based state machine of {@link viewJob} (queued, running with
 * progress, finished), which stands in for the external service doing the long work; every
 * executor sees the same state from the same record. When a look at a job finds its timeline over
 * and no outcome recorded, the handler assembles the result and the store keeps the first one
 * recorded. No call ever waits for a job.
 */
export class JobRunner {
  readonly #handlers: ReadonlyMap<string, JobHandler>;

  constructor(
    private readonly store: JobStore,
    private readonly clock: Clock,
    handlers: readonly JobHandler[],
  ) {
    this.#handlers = new Map(handlers.map((h) => [h.kind, h]));
  }

  /**
   * Records a job and returns its view immediately. Idempotent on (tenant, submissionKey): a
   * repeated submission returns the original job (`created: false`), whatever its parameters.
   * Throws TypeError for a kind without a handler.
   */
  async submit(submission: JobSubmission): Promise<{ readonly created: boolean; readonly view: JobView }> {
    const handler = this.#handler(submission.kind);
    const plan = handler.plan(submission.params);
    const { created, job } = await this.store.submit({
      ...submission,
      submittedAtMs: this.clock.now(),
      queuedMs: plan.queuedMs,
      runMs: plan.runMs,
    });
    return { created, view: viewJob(job, this.clock.now()) };
  }

  /** The tenant's job, advanced to now (see the class contract); undefined for an unknown job. */
  async job(tenant: string, jobId: string, signal?: AbortSignal): Promise<JobRecord | undefined> {
    const job = await this.store.get(tenant, jobId);
    if (job === undefined || job.outcome !== undefined) return job;
    if (this.clock.now() < job.submittedAtMs + job.queuedMs + job.runMs) return job;
    const handler = this.#handler(job.kind);
    try {
      const result = await handler.produce(job.params, job, signal ?? new AbortController().signal);
      return await this.store.finish(tenant, jobId, {
        state: 'succeeded',
        result,
        finishedAtMs: this.clock.now(),
      });
    } catch (err) {
      if (!(err instanceof JobFailure)) throw classify(err);
      return this.store.finish(tenant, jobId, {
        state: 'failed',
        error: err.message,
        finishedAtMs: this.clock.now(),
      });
    }
  }

  /** The job's view now; undefined for an unknown job. */
  async status(tenant: string, jobId: string, signal?: AbortSignal): Promise<JobView | undefined> {
    const job = await this.job(tenant, jobId, signal);
    return job === undefined ? undefined : viewJob(job, this.clock.now());
  }

  /** The job's result when it succeeded; otherwise its view. Undefined for an unknown job. */
  async result(tenant: string, jobId: string, signal?: AbortSignal): Promise<JobResult | undefined> {
    const job = await this.job(tenant, jobId, signal);
    if (job === undefined) return undefined;
    const view = viewJob(job, this.clock.now());
    if (job.outcome?.state === 'succeeded') return { kind: 'ready', view, result: job.outcome.result };
    if (job.outcome?.state === 'failed') return { kind: 'failed', view };
    return { kind: 'not-ready', view };
  }

  #handler(kind: string): JobHandler {
    const handler = this.#handlers.get(kind);
    if (handler === undefined) throw new TypeError(`no job handler for kind ${kind}`);
    return handler;
  }
}

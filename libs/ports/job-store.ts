/** How a job ended. The first outcome recorded is final. */
export type JobOutcome =
  | { readonly state: 'succeeded'; readonly result: unknown; readonly finishedAtMs: number }
  | { readonly state: 'failed'; readonly error: string; readonly finishedAtMs: number };

/** A job as submitted. `params` and results must be JSON data (they round-trip through JSON). */
export interface NewJob {
  readonly tenant: string;
  /**
   * Deduplicates submissions within a tenant: the submitting call's idempotency key, so a retried or
   * redelivered submit finds its job instead of starting a second one.
   */
  readonly submissionKey: string;
  /** Which handler runs it, e.g. `report:refunds_by_reason`. */
  readonly kind: string;
  readonly params: unknown;
  /** The verified principal that submitted it, and the user it acted for; only they may read it. */
  readonly submittedBy: string;
  readonly onBehalfOf?: string;
  /** The submitter's clock, epoch ms: the job's timeline is measured from here. */
  readonly submittedAtMs: number;
  /** How long it waits, then runs (the simulated timeline of a long-running job). */
  readonly queuedMs: number;
  readonly runMs: number;
}

/** A stored job. */
export interface JobRecord extends NewJob {
  readonly jobId: string;
  readonly outcome?: JobOutcome;
}

/**
 * Long-running jobs: submitted once, read many times, finished once. Each method is one
 * atomic step. Throws when the backing store is unreachable.
 */
export interface JobStore {
  /**
   * Stores `job` under a new job id unless the tenant already has a job with the same
   * `submissionKey`; then that job is returned unchanged with `created: false` (whatever the other
   * fields say). Exactly one of concurrent submits of one key creates.
   */
  submit(job: NewJob): Promise<{ readonly created: boolean; readonly job: JobRecord }>;
  /** The tenant's job with that id; undefined for an unknown id or another tenant's job. */
  get(tenant: string, jobId: string): Promise<JobRecord | undefined>;
  /**
   * Records the outcome unless one is already recorded (first wins; later calls change nothing) and
   * returns the job as stored. Undefined when the tenant has no such job.
   */
  finish(tenant: string, jobId: string, outcome: JobOutcome): Promise<JobRecord | undefined>;
}

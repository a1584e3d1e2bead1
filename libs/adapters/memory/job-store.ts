import { randomUUID } from 'node:crypto';
import type { JobOutcome, JobRecord, JobStore, NewJob } from '../../ports/job-store.js';
import { checkKey } from './argument-checks.js';

/**
 * Jobs in process memory (embedded mode, one executor, tests). Methods run to completion without
 * awaiting, so none interleave: submit's dedupe and finish's first-wins are atomic here. Records are
 * copied in and out through JSON, as the Postgres adapter stores them. Jobs are kept until the
 * process exits. See {@link JobStore} for the contract.
 */
export class MemoryJobStore implements JobStore {
  readonly #jobs = new Map<string, JobRecord>();
  readonly #bySubmission = new Map<string, string>();

  async submit(job: NewJob): Promise<{ created: boolean; job: JobRecord }> {
    checkKey('tenant', job.tenant);
    checkKey('submissionKey', job.submissionKey);
    const existing = this.#bySubmission.get(scoped(job.tenant, job.submissionKey));
    if (existing !== undefined) return { created: false, job: copy(this.#jobs.get(existing)!) };
    const record: JobRecord = { ...copy(job), jobId: `job_${randomUUID()}` };
    this.#jobs.set(scoped(job.tenant, record.jobId), record);
    this.#bySubmission.set(scoped(job.tenant, job.submissionKey), scoped(job.tenant, record.jobId));
    return { created: true, job: copy(record) };
  }

  async get(tenant: string, jobId: string): Promise<JobRecord | undefined> {
    const found = this.#jobs.get(scoped(tenant, jobId));
    return found === undefined ? undefined : copy(found);
  }

  async finish(tenant: string, jobId: string, outcome: JobOutcome): Promise<JobRecord | undefined> {
    const key = scoped(tenant, jobId);
    const found = this.#jobs.get(key);
    if (found === undefined) return undefined;
    if (found.outcome !== undefined) return copy(found);
    const finished: JobRecord = { ...found, outcome: copy(outcome) };
    this.#jobs.set(key, finished);
    return copy(finished);
  }
}

const scoped = (tenant: string, id: string): string => `${tenant}\u0000${id}`;

function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { JobOutcome, JobRecord, JobStore, NewJob } from '../../ports/job-store.js';
import { checkKey } from '../memory/argument-checks.js';

const COLUMNS = `job_id, tenant, submission_key, kind, params, submitted_by, on_behalf_of, submitted_at_ms,
  queued_ms, run_ms, outcome`;

interface JobRow {
  job_id: string;
  tenant: string;
  submission_key: string;
  kind: string;
  params: unknown;
  submitted_by: string;
  on_behalf_of: string | null;
  submitted_at_ms: string;
  queued_ms: string;
  run_ms: string;
  outcome: JobOutcome | null;
}

/** Re-reads after a conflicting submit whose row committed after this statement's snapshot. */
const MAX_SUBMIT_ATTEMPTS = 5;

/**
 * Jobs in PostgreSQL (table `jobs`, migration 031_jobs.sql; run `migrate(pool)` first), shared by
 * every executor. submit is `INSERT ... ON CONFLICT (tenant, submission_key) DO NOTHING` followed by
 * a read of the row that won, so concurrent submits of one key create one job; finish is one
 * `UPDATE ... WHERE outcome IS NULL`, so the first outcome wins. See {@link JobStore}.
 */
export class PostgresJobStore implements JobStore {
  constructor(private readonly pool: pg.Pool) {}

  async submit(job: NewJob): Promise<{ created: boolean; job: JobRecord }> {
    checkKey('tenant', job.tenant);
    checkKey('submissionKey', job.submissionKey);
    const inserted = await this.pool.query<JobRow>(
      `INSERT INTO jobs (${COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL)
       ON CONFLICT (tenant, submission_key) DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        `job_${randomUUID()}`,
        job.tenant,
        job.submissionKey,
        job.kind,
        JSON.stringify(job.params),
        job.submittedBy,
        job.onBehalfOf ?? null,
        job.submittedAtMs,
        job.queuedMs,
        job.runMs,
      ],
    );
    if (inserted.rows[0] !== undefined) return { created: true, job: toRecord(inserted.rows[0]) };
    for (let attempt = 0; attempt < MAX_SUBMIT_ATTEMPTS; attempt += 1) {
      const { rows } = await this.pool.query<JobRow>(
        `SELECT ${COLUMNS} FROM jobs WHERE tenant = $1 AND submission_key = $2`,
        [job.tenant, job.submissionKey],
      );
      if (rows[0] !== undefined) return { created: false, job: toRecord(rows[0]) };
    }
    throw new Error(`job submission ${job.submissionKey} conflicted but could not be read back`);
  }

  async get(tenant: string, jobId: string): Promise<JobRecord | undefined> {
    const { rows } = await this.pool.query<JobRow>(
      `SELECT ${COLUMNS} FROM jobs WHERE tenant = $1 AND job_id = $2`,
      [tenant, jobId],
    );
    return rows[0] === undefined ? undefined : toRecord(rows[0]);
  }

  async finish(tenant: string, jobId: string, outcome: JobOutcome): Promise<JobRecord | undefined> {
    await this.pool.query(
      'UPDATE jobs SET outcome = $3 WHERE tenant = $1 AND job_id = $2 AND outcome IS NULL',
      [tenant, jobId, JSON.stringify(outcome)],
    );
    return this.get(tenant, jobId);
  }
}

function toRecord(row: JobRow): JobRecord {
  return {
    jobId: row.job_id,
    tenant: row.tenant,
    submissionKey: row.submission_key,
    kind: row.kind,
    params: row.params,
    submittedBy: row.submitted_by,
    ...(row.on_behalf_of === null ? {} : { onBehalfOf: row.on_behalf_of }),
    submittedAtMs: Number(row.submitted_at_ms),
    queuedMs: Number(row.queued_ms),
    runMs: Number(row.run_ms),
    ...(row.outcome === null ? {} : { outcome: row.outcome }),
  };
}

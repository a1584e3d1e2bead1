import type pg from 'pg';
import { indexedColumns, type IndexedColumns } from '../../audit/columns.js';
import { prepareEnvelope } from '../../audit/envelope.js';
import { groupByChain, linkRecords } from '../../audit/hash-chain.js';
import { queryLimit, queryOffset, splitWhoDid, timeBound, whoDidEntry } from '../../audit/query.js';
import { verifyChains, type VerifiableRecord } from '../../audit/verify.js';
import type { AuditRecord } from '../../core/audit-record.js';
import type {
  AuditEnvelope,
  AuditQuery,
  AuditSource,
  AuditStore,
  StoredAuditRecord,
  VerifyOptions,
  VerifyReport,
  WhoDidAnswer,
  WhoDidOptions,
  WhoDidTarget,
} from '../../ports/audit-store.js';

export interface PostgresAuditStoreOptions {
  /** Rows per INSERT statement within one chain's transaction. Default 500. */
  readonly insertBatch?: number;
  /** Rows per page while verifying. Default 1000. */
  readonly verifyPageSize?: number;
  /**
   * How many chains (tenants) of one batch are appended at once, each in its own transaction on its
   * own connection. Default 4; keep it below the pool size.
   */
  readonly chainConcurrency?: number;
}

const COLUMNS = `chain, seq, record_id, producer_id, source, recorded_at_ms, tool, principal_id, tenant,
  resource_key, resource_id, call_id, trace_id, outcome, error_code, stage, reason, body, prev_hash, hash`;

/**
 * Transaction-scoped advisory lock on one chain of the table in the current schema. Every appender of
 * a chain takes it before reading the chain's head, so appends to one chain serialize across
 * processes while other chains (tenants) proceed in parallel. A hash collision between two chain
 * names only makes them share a lock.
 */
const LOCK_CHAIN = `SELECT pg_advisory_xact_lock(hashtext('toolgate.audit_chain'), hashtext(current_schema() || ':' || $1))`;

/**
 * The audit store in PostgreSQL (table `audit_records`, migration 010_audit.sql; run `migrate(pool)`
 * first). The table refuses UPDATE, DELETE and TRUNCATE by trigger; the hash chain detects what the
 * triggers cannot stop (see the migration's header).
 *
 * append: per chain, one transaction: take the chain lock, drop recordIds already stored, read the
 * head, link, insert. Each chain's part is atomic; up to `chainConcurrency` chains of a batch run at
 * once (a transaction holds one chain lock only, so they cannot deadlock). A unique violation on record_id (the same recordId raced into another
 * chain, which only a producer bug can cause) retries that chain's transaction once, where the record
 * then counts as a duplicate.
 */
export class PostgresAuditStore implements AuditStore {
  private readonly insertBatch: number;
  private readonly verifyPageSize: number;
  private readonly chainConcurrency: number;

  constructor(
    private readonly pool: pg.Pool,
    options: PostgresAuditStoreOptions = {},
  ) {
    this.insertBatch = options.insertBatch ?? 500;
    this.verifyPageSize = options.verifyPageSize ?? 1000;
    this.chainConcurrency = Math.max(1, options.chainConcurrency ?? 4);
  }

  async append(records: readonly AuditEnvelope[]): Promise<{ appended: number; duplicates: number }> {
    const prepared = records.map((r, i) => prepareEnvelope(r, i));
    const { groups, repeated } = groupByChain(prepared);
    const queue = [...groups.entries()];
    let appended = 0;
    let duplicates = repeated;
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const [chain, group] = next;
        const stored = await this.appendChainOnce(chain, group);
        appended += stored;
        duplicates += group.length - stored;
      }
    };
    const workers = Array.from({ length: Math.min(this.chainConcurrency, queue.length) }, worker);
    // Every started chain finishes (commits or rolls back) before the first failure is reported.
    const settled = await Promise.allSettled(workers);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    return { appended, duplicates };
  }

  /** One chain's transaction, retried once after a record_id unique violation (see the class doc). */
  private async appendChainOnce(chain: string, group: readonly AuditEnvelope[]): Promise<number> {
    try {
      return await this.appendChain(chain, group);
    } catch (err) {
      if ((err as { code?: unknown }).code !== '23505') throw err;
      return this.appendChain(chain, group);
    }
  }

  /** Appends one chain's records in one transaction; returns how many were new. */
  private async appendChain(chain: string, group: readonly AuditEnvelope[]): Promise<number> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // Its own statement: under READ COMMITTED the reads below then see every append committed by
      // whoever held the lock before us (a statement's snapshot starts when the statement does).
      await client.query(LOCK_CHAIN, [chain]);
      const { rows } = await client.query<{
        existing: string[] | null;
        seq: string | null;
        hash: string | null;
      }>(
        `SELECT (SELECT array_agg(record_id) FROM audit_records WHERE record_id = ANY($2::text[])) AS existing,
                head.seq, head.hash
         FROM (SELECT 1) AS one
         LEFT JOIN LATERAL (
           SELECT seq, hash FROM audit_records WHERE chain = $1 ORDER BY seq DESC LIMIT 1
         ) AS head ON true`,
        [chain, group.map((e) => e.recordId)],
      );
      const row = rows[0];
      const stored = new Set(row?.existing ?? []);
      const fresh = group.filter((e) => !stored.has(e.recordId));
      const head =
        row === undefined || row.seq === null || row.hash === null
          ? undefined
          : { seq: Number(row.seq), hash: row.hash };
      const linked = linkRecords(chain, head, fresh);
      for (let i = 0; i < linked.length; i += this.insertBatch) {
        await insertRows(client, linked.slice(i, i + this.insertBatch));
      }
      await client.query('COMMIT');
      return linked.length;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async query(filter: AuditQuery): Promise<StoredAuditRecord[]> {
    const where = new Where();
    where.eq('tool', filter.tool);
    where.eq('principal_id', filter.principalId);
    where.eq('tenant', filter.tenant);
    where.anyOf('tenant', filter.tenants);
    where.eq('resource_key', filter.resourceKey);
    where.eq('call_id', filter.callId);
    where.eq('trace_id', filter.traceId);
    where.eq('outcome', filter.outcome);
    where.eq('source', filter.source);
    where.window(filter.fromMs, filter.toMs);
    const dir = filter.order === 'desc' ? 'DESC' : 'ASC';
    const { rows } = await this.pool.query<AuditRow>(
      `SELECT ${COLUMNS} FROM audit_records ${where.sql()}
       ORDER BY recorded_at_ms ${dir}, chain ${dir}, seq ${dir}
       LIMIT ${where.param(queryLimit(filter.limit))} OFFSET ${where.param(queryOffset(filter.offset))}`,
      where.params,
    );
    return rows.map(toStored);
  }

  async verify(opts: VerifyOptions = {}): Promise<VerifyReport> {
    return verifyChains({
      chains: await this.chainNames(opts.chain),
      ...(opts.chain === undefined ? {} : { only: opts.chain }),
      ...(opts.anchors === undefined ? {} : { anchors: opts.anchors }),
      ...(opts.onProgress === undefined ? {} : { onProgress: opts.onProgress }),
      pageSize: this.verifyPageSize,
      readPage: async (chain, afterSeq, limit) => {
        const { rows } = await this.pool.query<AuditRow>(
          `SELECT ${COLUMNS} FROM audit_records WHERE chain = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
          [chain, afterSeq, limit],
        );
        return rows.map(toVerifiable);
      },
    });
  }

  /**
   * One statement: the rows on the resource (by `resource_key`, or by `resource_id` + `tool`, each
   * served by its own partial index), oldest first; labelled and split by outcome afterwards.
   */
  async whoDid(target: WhoDidTarget, opts: WhoDidOptions = {}): Promise<WhoDidAnswer> {
    const where = new Where();
    if (typeof target === 'string') {
      where.eq('resource_key', target);
    } else {
      where.eq('resource_id', target.resource);
      where.eq('tool', target.tool);
    }
    where.eq('tenant', opts.tenant);
    where.anyOf('tenant', opts.tenants);
    where.window(opts.fromMs, opts.toMs);
    const { rows } = await this.pool.query<AuditRow>(
      `SELECT ${COLUMNS} FROM audit_records ${where.sql()}
       ORDER BY recorded_at_ms, chain, seq LIMIT ${where.param(queryLimit(opts.limit))}`,
      where.params,
    );
    return splitWhoDid(rows.map((r) => whoDidEntry(toStored(r))));
  }

  /** The chains in the table (one index probe per chain, not a scan), or just `only` when given. */
  private async chainNames(only: string | undefined): Promise<string[]> {
    if (only !== undefined) return [only];
    const { rows } = await this.pool.query<{ chain: string }>(
      `WITH RECURSIVE chains AS (
         (SELECT chain FROM audit_records ORDER BY chain LIMIT 1)
         UNION ALL
         SELECT (SELECT a.chain FROM audit_records a WHERE a.chain > c.chain ORDER BY a.chain LIMIT 1)
         FROM chains c WHERE c.chain IS NOT NULL
       )
       SELECT chain FROM chains WHERE chain IS NOT NULL`,
    );
    return rows.map((r) => r.chain);
  }
}

/** A row as pg returns it (bigint columns arrive as strings). */
interface AuditRow {
  chain: string;
  seq: string;
  record_id: string;
  producer_id: string;
  source: string;
  recorded_at_ms: string;
  tool: string;
  principal_id: string;
  tenant: string;
  resource_key: string | null;
  resource_id: string | null;
  call_id: string;
  trace_id: string;
  outcome: string;
  error_code: string | null;
  stage: string | null;
  reason: string | null;
  body: AuditRecord;
  prev_hash: string;
  hash: string;
}

function toStored(row: AuditRow): StoredAuditRecord {
  return {
    recordId: row.record_id,
    producerId: row.producer_id,
    source: row.source as AuditSource,
    recordedAtMs: Number(row.recorded_at_ms),
    record: row.body,
    chain: row.chain,
    seq: Number(row.seq),
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

function toVerifiable(row: AuditRow): VerifiableRecord {
  const columns: IndexedColumns = {
    chain: row.chain,
    tool: row.tool,
    principalId: row.principal_id,
    tenant: row.tenant,
    resourceKey: row.resource_key,
    resourceId: row.resource_id,
    callId: row.call_id,
    traceId: row.trace_id,
    outcome: row.outcome,
    errorCode: row.error_code,
    stage: row.stage,
    reason: row.reason,
  };
  return { ...toStored(row), columns };
}

/** One multi-row INSERT through unnest, so the statement has a fixed 20 parameters. */
async function insertRows(client: pg.PoolClient, rows: readonly StoredAuditRecord[]): Promise<void> {
  if (rows.length === 0) return;
  const cols = rows.map((r) => ({ r, c: indexedColumns(r.record) }));
  await client.query(
    `INSERT INTO audit_records (${COLUMNS})
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[],
       $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
       $15::text[], $16::text[], $17::text[], $18::jsonb[], $19::text[], $20::text[])`,
    [
      cols.map(({ c }) => c.chain),
      rows.map((r) => r.seq),
      rows.map((r) => r.recordId),
      rows.map((r) => r.producerId),
      rows.map((r) => r.source),
      rows.map((r) => r.recordedAtMs),
      cols.map(({ c }) => c.tool),
      cols.map(({ c }) => c.principalId),
      cols.map(({ c }) => c.tenant),
      cols.map(({ c }) => c.resourceKey),
      cols.map(({ c }) => c.resourceId),
      cols.map(({ c }) => c.callId),
      cols.map(({ c }) => c.traceId),
      cols.map(({ c }) => c.outcome),
      cols.map(({ c }) => c.errorCode),
      cols.map(({ c }) => c.stage),
      cols.map(({ c }) => c.reason),
      rows.map((r) => JSON.stringify(r.record)),
      rows.map((r) => r.prevHash),
      rows.map((r) => r.hash),
    ],
  );
}

/** Builds a parameterised AND of optional equality and time-window filters. */
class Where {
  readonly params: unknown[] = [];
  private readonly parts: string[] = [];

  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  eq(column: string, value: string | undefined): void {
    if (value !== undefined) this.parts.push(`${column} = ${this.param(value)}`);
  }

  /** `column` is one of `values` (none: matches nothing). */
  anyOf(column: string, values: readonly string[] | undefined): void {
    if (values !== undefined) this.parts.push(`${column} = ANY(${this.param([...values])}::text[])`);
  }

  window(from: number | undefined, to: number | undefined): void {
    const fromMs = timeBound('fromMs', from);
    const toMs = timeBound('toMs', to);
    if (fromMs !== undefined) this.parts.push(`recorded_at_ms >= ${this.param(fromMs)}`);
    if (toMs !== undefined) this.parts.push(`recorded_at_ms < ${this.param(toMs)}`);
  }

  sql(): string {
    return this.parts.length === 0 ? '' : `WHERE ${this.parts.join(' AND ')}`;
  }
}

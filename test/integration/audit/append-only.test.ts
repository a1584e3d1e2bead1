import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import type { AuditEnvelope } from '../../../libs/ports/audit-store.js';
import { DATABASE_URL } from '../../helpers/env.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { auditRecord, envelope, refusedRecord } from '../../unit/audit/fixtures.js';

/**
 * The PostgreSQL audit table against the people who could change it: every role is refused UPDATE,
 * DELETE and TRUNCATE (superusers included, replica mode included), and what a superuser can still
 * do by disabling the triggers is found by verify() at exactly the edited seq.
 */
let db: TestSchema;
let store: PostgresAuditStore;

beforeAll(async () => {
  db = await createTestSchema('audit_ao');
  await migrate(db.pool);
  store = new PostgresAuditStore(db.pool, { verifyPageSize: 4 });
});
afterAll(async () => {
  await db.drop();
});

async function chainOf(n: number): Promise<string> {
  const tenant = uniqueName('tenant');
  const envs = Array.from({ length: n }, (_, i) =>
    envelope(i % 2 === 0 ? auditRecord({ tenant }) : refusedRecord({ tenant }), { recordedAtMs: 1_000 + i }),
  );
  expect(await store.append(envs)).toEqual({ appended: n, duplicates: 0 });
  return tenant;
}

/** Runs `body` on one connection with the audit triggers disabled, as a superuser could. */
async function withTriggersDisabled(body: (client: pg.PoolClient) => Promise<void>): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query('ALTER TABLE audit_records DISABLE TRIGGER USER');
    await body(client);
  } finally {
    // Plain ENABLE TRIGGER would bring them back in origin mode (silenced by replica mode).
    await client.query('ALTER TABLE audit_records ENABLE ALWAYS TRIGGER audit_records_refuse_rows');
    await client.query('ALTER TABLE audit_records ENABLE ALWAYS TRIGGER audit_records_refuse_statements');
    client.release();
  }
}

describe('audit_records refuses change', () => {
  it('the connection is a superuser (so the refusals below bind the most powerful role)', async () => {
    const { rows } = await db.pool.query<{ is_superuser: string }>('SHOW is_superuser');
    expect(rows[0]!.is_superuser).toBe('on');
  });

  it('refuses UPDATE, DELETE and TRUNCATE, even ones that would touch no row', async () => {
    const tenant = await chainOf(3);
    const refused = /audit_records is append-only: (UPDATE|DELETE|TRUNCATE) refused/;
    await expect(
      db.pool.query(`UPDATE audit_records SET principal_id = 'x' WHERE chain = $1`, [tenant]),
    ).rejects.toThrow(refused);
    await expect(
      db.pool.query('DELETE FROM audit_records WHERE chain = $1 AND seq = 2', [tenant]),
    ).rejects.toThrow(refused);
    await expect(db.pool.query('TRUNCATE audit_records')).rejects.toThrow(refused);
    await expect(db.pool.query('UPDATE audit_records SET seq = seq WHERE false')).rejects.toThrow(refused);
    await expect(db.pool.query('DELETE FROM audit_records WHERE false')).rejects.toThrow(refused);
    await expect(
      db.pool.query(
        `INSERT INTO audit_records SELECT * FROM audit_records WHERE chain = $1 AND seq = 1
         ON CONFLICT (chain, seq) DO UPDATE SET principal_id = 'x'`,
        [tenant],
      ),
    ).rejects.toThrow(refused);
    const { rows } = await db.pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM audit_records WHERE chain = $1',
      [tenant],
    );
    expect(Number(rows[0]!.n)).toBe(3);
    expect(await store.verify({ chain: tenant })).toMatchObject({ ok: true, checked: 3 });
  });

  it('replica mode, which silences ordinary triggers, does not silence these', async () => {
    const tenant = await chainOf(2);
    const client = await db.pool.connect();
    try {
      await client.query('SET session_replication_role = replica');
      await expect(
        client.query(`UPDATE audit_records SET principal_id = 'x' WHERE chain = $1`, [tenant]),
      ).rejects.toThrow(/append-only/);
      await expect(client.query('DELETE FROM audit_records WHERE chain = $1', [tenant])).rejects.toThrow(
        /append-only/,
      );
      await expect(client.query('TRUNCATE audit_records')).rejects.toThrow(/append-only/);
    } finally {
      await client.query('RESET session_replication_role');
      client.release();
    }
  });
});

describe('verify() finds what a superuser does with the triggers disabled', () => {
  it('an edited body (and its column) is reported at exactly that seq', async () => {
    const tenant = await chainOf(9);
    await withTriggersDisabled(async (c) => {
      const edited = await c.query(
        `UPDATE audit_records SET body = jsonb_set(body, '{principalId}', '"mallory"'), principal_id = 'mallory'
         WHERE chain = $1 AND seq = 5`,
        [tenant],
      );
      expect(edited.rowCount).toBe(1);
    });
    // The triggers are back.
    await expect(
      db.pool.query(`UPDATE audit_records SET principal_id = 'y' WHERE chain = $1`, [tenant]),
    ).rejects.toThrow(/append-only/);
    expect(await store.verify({ chain: tenant })).toMatchObject({
      ok: false,
      chain: tenant,
      firstBrokenSeq: 5,
      reason: 'hash-mismatch',
      checked: 5,
    });
    // And over every chain, the same first broken link is found.
    const all = await store.verify();
    expect(all.ok).toBe(false);
  });

  it('an edited indexed column alone is reported as a column mismatch at that seq', async () => {
    const tenant = await chainOf(6);
    await withTriggersDisabled(async (c) => {
      await c.query(`UPDATE audit_records SET outcome = 'SUCCESS' WHERE chain = $1 AND seq = 2`, [tenant]);
    });
    expect(await store.verify({ chain: tenant })).toMatchObject({
      ok: false,
      firstBrokenSeq: 2,
      reason: 'column-mismatch',
    });
  });

  it('a deleted row is reported as the missing seq', async () => {
    const tenant = await chainOf(7);
    await withTriggersDisabled(async (c) => {
      await c.query('DELETE FROM audit_records WHERE chain = $1 AND seq = 4', [tenant]);
    });
    expect(await store.verify({ chain: tenant })).toMatchObject({
      ok: false,
      firstBrokenSeq: 4,
      reason: 'seq-gap',
    });
  });

  it('a row edited with a recomputed hash is caught at the next link; a deleted tail by an anchor', async () => {
    const tenant = await chainOf(6);
    const before = await store.verify({ chain: tenant });
    if (!before.ok) throw new Error(before.detail);
    await withTriggersDisabled(async (c) => {
      await c.query(`UPDATE audit_records SET hash = repeat('a', 64) WHERE chain = $1 AND seq = 3`, [tenant]);
      await c.query('DELETE FROM audit_records WHERE chain = $1 AND seq = 6', [tenant]);
    });
    expect(await store.verify({ chain: tenant })).toMatchObject({
      ok: false,
      firstBrokenSeq: 3,
      reason: 'hash-mismatch',
    });
    const tail = await chainOf(5);
    const head = await store.verify({ chain: tail });
    if (!head.ok) throw new Error(head.detail);
    await withTriggersDisabled(async (c) => {
      await c.query('DELETE FROM audit_records WHERE chain = $1 AND seq = 5', [tail]);
    });
    // Without the anchor the shortened chain is consistent in itself; with it, the loss shows.
    expect(await store.verify({ chain: tail })).toMatchObject({ ok: true, checked: 4 });
    expect(
      await store.verify({ chain: tail, anchors: [{ chain: tail, ...head.heads[tail]! }] }),
    ).toMatchObject({
      ok: false,
      firstBrokenSeq: 5,
      reason: 'anchor-mismatch',
    });
  });
});

describe('concurrent audit sinks', () => {
  it('200 records over 2 tenants from 2 pools: gapless chains, verify ok, re-append adds nothing', async () => {
    const second = new pg.Pool({
      connectionString: DATABASE_URL,
      max: 5,
      options: `-c search_path="${db.schema}"`,
    });
    const other = new PostgresAuditStore(second);
    try {
      const [a, b] = [uniqueName('tenant'), uniqueName('tenant')];
      const envs: AuditEnvelope[] = Array.from({ length: 200 }, (_, i) =>
        envelope(auditRecord({ tenant: i % 3 === 0 ? a : b }), { recordedAtMs: 5_000 + i }),
      );
      const batches: AuditEnvelope[][] = [];
      for (let i = 0; i < envs.length; i += 5) batches.push(envs.slice(i, i + 5));
      const sinks = [store, other];
      const first = await Promise.all(batches.map((batch, i) => sinks[i % 2]!.append(batch)));
      expect(first.reduce((n, r) => n + r.appended, 0)).toBe(200);
      // Redelivery to the other sink, and overlapping batches, all at once.
      const overlap: AuditEnvelope[][] = batches.map((batch, i) => [...batch, ...(batches[i + 1] ?? [])]);
      const second_ = await Promise.all(overlap.map((batch, i) => sinks[(i + 1) % 2]!.append(batch)));
      expect(second_.reduce((n, r) => n + r.appended, 0)).toBe(0);

      const { rows } = await db.pool.query<{ chain: string; n: string; max: string; ids: string }>(
        `SELECT chain, count(*) AS n, max(seq) AS max, count(DISTINCT record_id) AS ids
         FROM audit_records WHERE chain = ANY($1) GROUP BY chain`,
        [[a, b]],
      );
      const byChain = Object.fromEntries(rows.map((r) => [r.chain, r]));
      expect(Number(byChain[a]!.n)).toBe(67);
      expect(Number(byChain[a]!.max)).toBe(67);
      expect(Number(byChain[b]!.n)).toBe(133);
      expect(Number(byChain[b]!.max)).toBe(133);
      expect(Number(byChain[a]!.ids) + Number(byChain[b]!.ids)).toBe(200);
      for (const t of [a, b]) expect(await store.verify({ chain: t })).toMatchObject({ ok: true });
      expect((await store.verify({ chain: a })).checked).toBe(67);
    } finally {
      await second.end();
    }
  });

  it('the same recordId raced into two chains is stored once, without an error', async () => {
    const [a, b] = [uniqueName('tenant'), uniqueName('tenant')];
    const second = new pg.Pool({
      connectionString: DATABASE_URL,
      max: 2,
      options: `-c search_path="${db.schema}"`,
    });
    try {
      const other = new PostgresAuditStore(second);
      for (let round = 0; round < 5; round++) {
        const recordId = uniqueName('rec');
        const results = await Promise.all([
          store.append([envelope(auditRecord({ tenant: a }), { recordId })]),
          other.append([envelope(auditRecord({ tenant: b }), { recordId })]),
        ]);
        expect(results.reduce((n, r) => n + r.appended, 0)).toBe(1);
        expect(results.reduce((n, r) => n + r.duplicates, 0)).toBe(1);
      }
      for (const t of [a, b]) expect(await store.verify({ chain: t })).toMatchObject({ ok: true });
    } finally {
      await second.end();
    }
  });

  it('whoDid is one SQL statement', async () => {
    const tenant = await chainOf(4);
    let statements = 0;
    const counting = new pg.Pool({
      connectionString: DATABASE_URL,
      max: 2,
      options: `-c search_path="${db.schema}"`,
    });
    const query = counting.query.bind(counting);
    counting.query = ((...args: Parameters<typeof query>) => {
      statements += 1;
      return query(...args);
    }) as typeof counting.query;
    try {
      const answer = await new PostgresAuditStore(counting).whoDid(
        { tool: 'refund_payment', resource: 'O-5512' },
        { tenant },
      );
      expect(statements).toBe(1);
      expect(answer.did).toHaveLength(2);
      expect(answer.tried).toHaveLength(2);
    } finally {
      await counting.end();
    }
  });
});

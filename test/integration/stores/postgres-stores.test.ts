import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PostgresIdempotencyStore,
  PostgresRateLimiter,
  migrate,
} from '../../../libs/adapters/postgres/index.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { uniqueName } from '../../helpers/names.js';
import { openForSuite } from '../../helpers/stack-lifecycle.js';
import { expectLeaseFromServerClock } from './lease-clock.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const SLACK_MS = 250;
const stored = { outcome: 'SUCCESS', result: { ok: true }, completedAtMs: 0 };

async function dbNowMs(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ ms: string }>(
    'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms',
  );
  return Number(rows[0]!.ms);
}

describe('Postgres stores: what the contract suite cannot see', () => {
  let s: TestSchema;
  let store: PostgresIdempotencyStore;
  let limiter: PostgresRateLimiter;

  openForSuite(async () => (s = await createTestSchema('postgres_stores')), {
    close: (schema) => schema.drop(),
  });
  beforeAll(async () => {
    await migrate(s.pool);
    store = new PostgresIdempotencyStore(s.pool, { abandonedRetentionMs: 200 });
    limiter = new PostgresRateLimiter(s.pool);
  });

  it('takes lease times from the database clock', async () => {
    await expectLeaseFromServerClock(store, () => dbNowMs(s.pool), 1);
  });

  it('records whose lapsed lease a claim took over', async () => {
    const k = uniqueName('k');
    await store.claim(k, 'fp', 'crashed', 100);
    await sleep(150);
    expect((await store.claim(k, 'fp', 'rescuer', 10_000)).kind).toBe('taken-over');
    const { rows } = await s.pool.query(
      'SELECT owner, taken_over_from, state FROM idempotency_keys WHERE key = $1',
      [k],
    );
    expect(rows).toEqual([{ owner: 'rescuer', taken_over_from: 'crashed', state: 'in-flight' }]);
  });

  it('purgeExpired deletes exactly the dead rows: completed past TTL, abandoned past retention', async () => {
    const p = uniqueName('purge');
    await store.claim(`${p}-done-short`, 'fp', 'a', 10_000);
    await store.complete(`${p}-done-short`, 'a', stored, 100);
    await store.claim(`${p}-done-long`, 'fp', 'a', 10_000);
    await store.complete(`${p}-done-long`, 'a', stored, 60_000);
    await store.claim(`${p}-abandoned`, 'fp', 'a', 100); // dead after 100 ms lease + 200 ms retention
    await store.claim(`${p}-running`, 'fp', 'a', 60_000);
    await sleep(300 + SLACK_MS);
    expect(await store.purgeExpired()).toBeGreaterThanOrEqual(2); // other tests' dead rows count too
    const { rows } = await s.pool.query<{ key: string }>(
      'SELECT key FROM idempotency_keys WHERE key LIKE $1 ORDER BY key',
      [`${p}-%`],
    );
    expect(rows.map((r) => r.key)).toEqual([`${p}-done-long`, `${p}-running`]);
    expect(await store.purgeExpired()).toBe(0);
  });

  it('stores the result as jsonb and keeps tokens as a fractional count', async () => {
    const k = uniqueName('k');
    await store.claim(k, 'fp', 'a', 10_000);
    await store.complete(k, 'a', stored, 60_000);
    const { rows } = await s.pool.query('SELECT stored FROM idempotency_keys WHERE key = $1', [k]);
    expect(rows[0].stored).toEqual(stored);

    const b = uniqueName('b');
    await limiter.take(b, { capacity: 2, refillPerSecond: 0.5 }, 1.5);
    const bucket = await s.pool.query('SELECT tokens FROM rate_limit_buckets WHERE key = $1', [b]);
    expect(bucket.rows[0].tokens).toBeCloseTo(0.5, 3);
  });

  it('purgeIdle deletes only buckets that are full again', async () => {
    const fast = uniqueName('fast');
    const slow = uniqueName('slow');
    await limiter.take(fast, { capacity: 1, refillPerSecond: 20 }); // full again after 50 ms
    await limiter.take(slow, { capacity: 1, refillPerSecond: 0.01 });
    await sleep(50 + SLACK_MS);
    await limiter.purgeIdle();
    const { rows } = await s.pool.query<{ key: string }>(
      'SELECT key FROM rate_limit_buckets WHERE key = ANY($1)',
      [[fast, slow]],
    );
    expect(rows.map((r) => r.key)).toEqual([slow]);
    // A purged bucket behaves as the full bucket it was.
    expect(await limiter.take(fast, { capacity: 1, refillPerSecond: 20 })).toEqual({
      allowed: true,
      remaining: 0,
      retryAfterMs: 0,
    });
  });

  it('creates each bucket row once under concurrent first takes', async () => {
    const b = uniqueName('first');
    const takes = await Promise.all(
      Array.from({ length: 20 }, () => limiter.take(b, { capacity: 5, refillPerSecond: 0.01 })),
    );
    expect(takes.filter((t) => t.allowed)).toHaveLength(5);
    const { rows } = await s.pool.query('SELECT count(*)::int AS n FROM rate_limit_buckets WHERE key = $1', [
      b,
    ]);
    expect(rows[0].n).toBe(1);
  });
});

describe('Postgres stores when the database is unreachable', () => {
  let dead: pg.Pool;
  beforeAll(() => {
    dead = new pg.Pool({
      host: '127.0.0.1',
      port: 1,
      user: 'postgres',
      database: 'test',
      connectionTimeoutMillis: 2000,
    });
  });
  afterAll(async () => {
    await dead.end();
  });

  it('throws from claim, complete, release, take and migrate (callers fail closed)', async () => {
    const store = new PostgresIdempotencyStore(dead);
    const limiter = new PostgresRateLimiter(dead);
    await expect(store.claim('k', 'fp', 'a', 1000)).rejects.toThrow();
    await expect(store.complete('k', 'a', stored, 1000)).rejects.toThrow();
    await expect(store.release('k', 'a')).rejects.toThrow();
    await expect(limiter.take('b', { capacity: 1, refillPerSecond: 1 })).rejects.toThrow();
    await expect(migrate(dead)).rejects.toThrow();
  });
});

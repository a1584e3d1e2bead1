import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemorySingleUseStore } from '../../libs/adapters/memory/single-use-store.js';
import { migrate } from '../../libs/adapters/postgres/migrate.js';
import { PostgresSingleUseStore } from '../../libs/adapters/postgres/single-use-store.js';
import { RedisSingleUseStore } from '../../libs/adapters/redis/single-use-store.js';
import { ManualClock } from '../../libs/core/manual-clock.js';
import type { SingleUseStore } from '../../libs/ports/single-use-store.js';
import { DATABASE_URL, REDIS_URL } from '../helpers/env.js';
import { createTestSchema } from '../helpers/postgres.js';
import { createTestRedis } from '../helpers/redis.js';

/** The store under test, a second client of the same backing store, and a way to let time pass. */
interface Harness {
  readonly store: SingleUseStore;
  readonly peer: SingleUseStore;
  /** The store's clock as the test process reads it. */
  now(): number;
  /** How far apart the store's clock and {@link Harness.now} may be (0 for the manual clock). */
  readonly skewMs: number;
  pass(ms: number): Promise<void>;
  close(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const adapters: { name: string; create(): Promise<Harness> }[] = [
  {
    name: 'memory',
    create() {
      const clock = new ManualClock(1_700_000_000_000);
      const store = new MemorySingleUseStore(clock);
      return Promise.resolve({
        store,
        peer: store,
        now: () => clock.now(),
        skewMs: 0,
        pass: (ms) => clock.advance(ms),
        close: () => Promise.resolve(),
      });
    },
  },
  {
    name: 'redis',
    create() {
      const test = createTestRedis('single_use');
      const second = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
      return Promise.resolve({
        store: new RedisSingleUseStore(test.redis, { keyPrefix: test.prefix }),
        peer: new RedisSingleUseStore(second, { keyPrefix: test.prefix }),
        now: () => Date.now(),
        skewMs: 1_000,
        pass: sleep,
        async close() {
          const keys = await test.redis.keys(`${test.prefix}*`);
          if (keys.length > 0) await test.redis.del(...keys);
          await second.quit();
          await test.close();
        },
      });
    },
  },
  {
    name: 'postgres',
    async create() {
      const test = await createTestSchema('single_use');
      await migrate(test.pool);
      const second = new pg.Pool({
        connectionString: DATABASE_URL,
        max: 10,
        options: `-c search_path="${test.schema}"`,
      });
      return {
        store: new PostgresSingleUseStore(test.pool),
        peer: new PostgresSingleUseStore(second),
        now: () => Date.now(),
        skewMs: 1_000,
        pass: sleep,
        async close() {
          await second.end();
          await test.drop();
        },
      };
    },
  },
];

const HOUR = 3_600_000;
const fresh = (): string => `jti-${randomUUID()}`;

describe.each(adapters)('SingleUseStore contract: $name', (adapter) => {
  let h: Harness;
  beforeAll(async () => {
    h = await adapter.create();
  });
  afterAll(async () => {
    await h.close();
  });

  it('a fresh id is consumed once; every later consume is already-used', async () => {
    const id = fresh();
    expect(await h.store.consume(id, HOUR)).toBe('consumed');
    expect(await h.store.consume(id, HOUR)).toBe('already-used');
    expect(await h.peer.consume(id, HOUR)).toBe('already-used');
  });

  it('of 20 concurrent consumers on two clients, exactly one gets consumed', async () => {
    const id = fresh();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? h.store : h.peer).consume(id, HOUR, `call-${i}`)),
    );
    expect(answers.filter((a) => a === 'consumed')).toHaveLength(1);
    expect(answers.filter((a) => a === 'already-used')).toHaveLength(19);
  });

  it('ids are independent of each other', async () => {
    const [a, b] = [fresh(), fresh()];
    expect(await h.store.consume(a, HOUR)).toBe('consumed');
    expect(await h.store.consume(b, HOUR)).toBe('consumed');
  });

  it('the same holder may consume again (a retry of one call); another holder or none may not', async () => {
    const id = fresh();
    expect(await h.store.consume(id, HOUR, 'idem-1')).toBe('consumed');
    expect(await h.peer.consume(id, HOUR, 'idem-1')).toBe('consumed');
    expect(await h.store.consume(id, HOUR, 'idem-2')).toBe('already-used');
    expect(await h.store.consume(id, HOUR)).toBe('already-used');
  });

  it('an id consumed without a holder is not re-entered by an empty holder', async () => {
    const id = fresh();
    expect(await h.store.consume(id, HOUR, '')).toBe('consumed');
    expect(await h.store.consume(id, HOUR, '')).toBe('already-used');
  });

  it('an id is remembered for ttlMs and forgotten after it', async () => {
    const id = fresh();
    expect(await h.store.consume(id, 300)).toBe('consumed');
    expect(await h.store.consume(id, 300)).toBe('already-used');
    await h.pass(600);
    expect(await h.store.consume(id, HOUR)).toBe('consumed');
    expect(await h.store.consume(id, HOUR)).toBe('already-used');
  });

  it('no approval until one is recorded; the recorded one is read back by every client', async () => {
    const id = fresh();
    expect(await h.store.approval(id)).toBeUndefined();
    const before = h.now();
    const approval = await h.store.approve(id, 'manager:M-1', HOUR);
    const after = h.now();
    expect(approval.approver).toBe('manager:M-1');
    expect(approval.approvedAtMs).toBeGreaterThanOrEqual(before - h.skewMs);
    expect(approval.approvedAtMs).toBeLessThanOrEqual(after + h.skewMs);
    expect(await h.peer.approval(id)).toEqual(approval);
  });

  it('the first approval wins: approving again returns it unchanged', async () => {
    const id = fresh();
    const first = await h.store.approve(id, 'manager:M-1', HOUR);
    await h.pass(5);
    const second = await h.peer.approve(id, 'manager:M-2', HOUR);
    expect(second).toEqual(first);
    expect(await h.store.approval(id)).toEqual(first);
  });

  it('of concurrent approvals by different people, every caller is told the same single winner', async () => {
    const id = fresh();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? h.store : h.peer).approve(id, `manager:M-${i}`, HOUR),
      ),
    );
    const winners = new Set(answers.map((a) => `${a.approver}@${a.approvedAtMs}`));
    expect(winners.size).toBe(1);
    expect(await h.store.approval(id)).toEqual(answers[0]);
  });

  it('an approval expires after its ttl', async () => {
    const id = fresh();
    await h.store.approve(id, 'manager:M-1', 300);
    expect(await h.store.approval(id)).toBeDefined();
    await h.pass(600);
    expect(await h.store.approval(id)).toBeUndefined();
    expect((await h.store.approve(id, 'manager:M-2', HOUR)).approver).toBe('manager:M-2');
  });

  it('approving does not consume, and consuming does not approve', async () => {
    const [approved, consumed] = [fresh(), fresh()];
    await h.store.approve(approved, 'manager:M-1', HOUR);
    expect(await h.store.consume(approved, HOUR)).toBe('consumed');
    await h.store.consume(consumed, HOUR);
    expect(await h.store.approval(consumed)).toBeUndefined();
  });

  it('refuses an empty id or approver and a ttl that is not a positive duration', async () => {
    await expect(h.store.consume('', HOUR)).rejects.toThrow(RangeError);
    await expect(h.store.consume(fresh(), 0)).rejects.toThrow(RangeError);
    await expect(h.store.consume(fresh(), Number.NaN)).rejects.toThrow(RangeError);
    await expect(h.store.approve(fresh(), '', HOUR)).rejects.toThrow(RangeError);
    await expect(h.store.approve(fresh(), 'manager:M-1', -5)).rejects.toThrow(RangeError);
    await expect(h.store.approval('')).rejects.toThrow(RangeError);
  });
});

import { Redis } from 'ioredis';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { argumentsFingerprint, idempotencyKey } from '../../../libs/core/idempotency-key.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import type {
  ClaimResult,
  IdempotencyStore,
  PeekResult,
  StoredResult,
} from '../../../libs/ports/idempotency-store.js';
import { MemoryRateLimiter } from '../../../libs/adapters/memory/index.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { REDIS_URL } from '../../helpers/env.js';
import { uniqueName } from '../../helpers/names.js';
import { openForSuite } from '../../helpers/stack-lifecycle.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import {
  context,
  executor,
  pipelineOver,
  postgresBackend,
  redisBackend,
  toolCall,
  type Backend,
} from './store-backed-pipeline.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A refund tool whose effect is counted; each run takes long enough for duplicates to overlap it. */
function refundTool() {
  const effects: string[] = [];
  const tool = defineTool({
    name: 'issue_refund',
    version: '1.0.0',
    description: 'Refund an order. Use for a damaged or missing delivery; not for cancellations.',
    input: z.object({ orderId: z.string(), amount: z.number() }),
    output: z.object({ refundId: z.string(), orderId: z.string(), amount: z.number() }),
    scopes: [],
    owner: 'payments',
    timeoutMs: 5_000,
    async execute(args, inv) {
      effects.push(inv.idempotencyKey);
      const refundId = `R-${effects.length}`;
      await sleep(40);
      return { refundId, orderId: args.orderId, amount: args.amount, internalLedgerId: 'L-secret' };
    },
  });
  return { tool: tool as unknown as ToolDefinition, effects };
}

const ARGS = { orderId: 'O-5512', amount: 49.99 };

/** A fresh refund tool, a task of its own, and the idempotency key of {@link ARGS} in that task. */
function refundCall() {
  const { tool, effects } = refundTool();
  const ctx = context(uniqueName('task'));
  return { tool, effects, ctx, key: idempotencyKey(ctx, 'issue_refund', ARGS) };
}

function backendSuite(makeBackend: () => Promise<Backend>, makeNaive: () => Promise<NaiveHarness>) {
  let backend: Backend;
  openForSuite(async () => (backend = await makeBackend()));

  it('a sequential duplicate is executed once and answered with the original payload', async () => {
    const { tool, effects, ctx, key } = refundCall();
    const pipeline = executor(backend, [tool], 'exec-1');
    const first = await pipeline.run(toolCall('issue_refund', ARGS), ctx, { idempotencyKey: key });
    const second = await pipeline.run(toolCall('issue_refund', ARGS), ctx, { idempotencyKey: key });
    expect(first.result).toMatchObject({ outcome: 'SUCCESS', toolInvocations: 1 });
    expect(first.result.payload).toEqual({ refundId: 'R-1', orderId: 'O-5512', amount: 49.99 });
    expect(second.result).toMatchObject({
      outcome: 'DUPLICATE',
      toolInvocations: 0,
      payload: first.result.payload,
    });
    expect(effects).toEqual([key]);
  });

  it('20 concurrent identical calls across 4 executors: exactly one effect, 19 DUPLICATEs with the same payload', async () => {
    const { tool, effects, ctx, key } = refundCall();
    const executors = Array.from({ length: 4 }, (_, i) => executor(backend, [tool], `exec-${i}`));
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        executors[i % 4]!.run(toolCall('issue_refund', ARGS, `call-${i}`), ctx, { idempotencyKey: key }),
      ),
    );
    expect(effects).toHaveLength(1);
    const outcomes = runs.map((r) => r.result.outcome).sort();
    expect(outcomes).toEqual([...Array<string>(19).fill('DUPLICATE'), 'SUCCESS']);
    // Equal as data (jsonb does not keep key order, so compare values, not serialized text).
    for (const r of runs)
      expect(r.result.payload).toEqual({ refundId: 'R-1', orderId: 'O-5512', amount: 49.99 });
    expect(runs.reduce((n, r) => n + r.result.toolInvocations, 0)).toBe(1);
  });

  it('a naive lookup-then-write store lets concurrent duplicates through: the race is real', async () => {
    const naive = await makeNaive();
    try {
      const { tool, effects, ctx, key } = refundCall();
      const executors = Array.from({ length: 4 }, (_, i) => naivePipeline(naive.store(), tool, `exec-${i}`));
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          executors[i % 4]!.run(toolCall('issue_refund', ARGS, `call-${i}`), ctx, { idempotencyKey: key }),
        ),
      );
      expect(effects.length).toBeGreaterThan(1);
    } finally {
      await naive.close();
    }
  });

  it('the same key with other arguments is refused and never reaches the tool', async () => {
    const { tool, effects, ctx, key } = refundCall();
    const pipeline = executor(backend, [tool], 'exec-1');
    expect(
      (await pipeline.run(toolCall('issue_refund', ARGS), ctx, { idempotencyKey: key })).result.outcome,
    ).toBe('SUCCESS');
    // A publisher reusing that key for other arguments: the key does not belong to this call.
    const other = { orderId: 'O-5512', amount: 499.9 };
    const reused = await pipeline.run(toolCall('issue_refund', other), ctx, { idempotencyKey: key });
    expect(reused.result).toMatchObject({ outcome: 'SCHEMA_INVALID', error: { code: 'MALFORMED_EVENT' } });
    // A record for this key holding another fingerprint (e.g. written by another client): a conflict.
    const conflictCtx = context(uniqueName('task'));
    const conflictKey = idempotencyKey(conflictCtx, 'issue_refund', other);
    await backend.connect().idempotency.claim(conflictKey, argumentsFingerprint(ARGS), 'someone', 60_000);
    const conflicting = await pipeline.run(toolCall('issue_refund', other), conflictCtx, {
      idempotencyKey: conflictKey,
    });
    expect(conflicting.result).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' }, toolInvocations: 0 });
    expect(effects).toHaveLength(1);
  });

  it('two distinct calls with equal arguments in one turn (index 0 and 1) both run', async () => {
    const { tool, effects } = refundTool();
    const pipeline = executor(backend, [tool], 'exec-1');
    const taskId = uniqueName('task');
    const runs = await Promise.all(
      [0, 1].map((index) => {
        const ctx = context(taskId, index);
        return pipeline.run(toolCall('issue_refund', ARGS, `call-${index}`), ctx, {
          idempotencyKey: idempotencyKey(ctx, 'issue_refund', ARGS),
        });
      }),
    );
    expect(runs.map((r) => r.result.outcome)).toEqual(['SUCCESS', 'SUCCESS']);
    expect(new Set(effects).size).toBe(2);
  });
}

describe('idempotency under concurrency: Redis store', () => {
  backendSuite(() => Promise.resolve(redisBackend()), naiveRedis);
});

describe('idempotency under concurrency: Postgres store', () => {
  backendSuite(() => postgresBackend(), naivePostgres);
});

// ---------------------------------------------------------------------------------------------------
// The broken pattern, kept here only to show the test can fail: look the key up, then write it.

interface NaiveHarness {
  store(): IdempotencyStore;
  close(): Promise<void>;
}

type NaiveRecord =
  | { state: 'in-flight'; fingerprint: string; owner: string; leaseExpiresAtMs: number }
  | { state: 'completed'; fingerprint: string; stored: StoredResult };

/** Plain reads and writes of one record per key; nothing atomic across them. */
interface RecordTable {
  get(key: string): Promise<NaiveRecord | undefined>;
  put(key: string, record: NaiveRecord): Promise<void>;
  del(key: string): Promise<void>;
}

/**
 * The plausible-looking broken store: read the record, and if there is none, write an in-flight
 * marker. Two claimants can both read "none" before either writes. (A class rather than an object
 * literal so extra port methods compile whatever the port's current shape.)
 */
class NaiveStore {
  constructor(private readonly table: RecordTable) {}

  async claim(key: string, fingerprint: string, owner: string, leaseMs: number): Promise<ClaimResult> {
    const record = await this.table.get(key); // lookup …
    if (record !== undefined) {
      if (record.fingerprint !== fingerprint)
        return { kind: 'conflict', storedFingerprint: record.fingerprint };
      if (record.state === 'completed') return { kind: 'completed', stored: record.stored };
      return { kind: 'in-flight', owner: record.owner, leaseExpiresAtMs: record.leaseExpiresAtMs };
    }
    const leaseExpiresAtMs = Date.now() + leaseMs;
    await this.table.put(key, { state: 'in-flight', fingerprint, owner, leaseExpiresAtMs }); // … then write
    return { kind: 'claimed', leaseExpiresAtMs };
  }

  async complete(key: string, _owner: string, stored: StoredResult): Promise<boolean> {
    const record = await this.table.get(key);
    await this.table.put(key, { state: 'completed', fingerprint: record?.fingerprint ?? '', stored });
    return true;
  }

  async settle(key: string, stored: StoredResult): Promise<boolean> {
    return this.complete(key, '', stored);
  }

  async release(key: string): Promise<boolean> {
    await this.table.del(key);
    return true;
  }

  async peek(key: string): Promise<PeekResult> {
    const record = await this.table.get(key);
    if (record === undefined) return { kind: 'absent' };
    if (record.state === 'completed') {
      return { kind: 'completed', fingerprint: record.fingerprint, stored: record.stored };
    }
    const { fingerprint, owner, leaseExpiresAtMs } = record;
    return {
      kind: 'in-flight',
      fingerprint,
      owner,
      leaseExpiresAtMs,
      leaseExpired: leaseExpiresAtMs <= Date.now(),
    };
  }
}

async function naiveRedis(): Promise<NaiveHarness> {
  const prefix = `${uniqueName('naive')}:`;
  const clients: Redis[] = [];
  const admin = new Redis(REDIS_URL);
  return {
    store() {
      const redis = new Redis(REDIS_URL);
      clients.push(redis);
      return new NaiveStore({
        get: async (key) => {
          const raw = await redis.get(prefix + key);
          return raw === null ? undefined : (JSON.parse(raw) as NaiveRecord);
        },
        put: async (key, record) => {
          await redis.set(prefix + key, JSON.stringify(record));
        },
        del: async (key) => {
          await redis.del(prefix + key);
        },
      });
    },
    async close() {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      await Promise.all([...clients, admin].map((c) => c.quit()));
    },
  };
}

async function naivePostgres(): Promise<NaiveHarness> {
  const schema: TestSchema = await createTestSchema('naive');
  const pool: pg.Pool = schema.pool;
  await pool.query('CREATE TABLE naive_keys (key text PRIMARY KEY, record jsonb NOT NULL)');
  return {
    store() {
      return new NaiveStore({
        get: async (key) => {
          const { rows } = await pool.query<{ record: NaiveRecord }>(
            'SELECT record FROM naive_keys WHERE key = $1',
            [key],
          );
          return rows[0]?.record;
        },
        put: async (key, record) => {
          await pool.query(
            'INSERT INTO naive_keys (key, record) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET record = EXCLUDED.record',
            [key, record],
          );
        },
        del: async (key) => {
          await pool.query('DELETE FROM naive_keys WHERE key = $1', [key]);
        },
      });
    },
    close: () => schema.drop(),
  };
}

/** The same pipeline, but over the naive store. */
function naivePipeline(store: IdempotencyStore, tool: ToolDefinition, owner: string): GuardPipeline {
  return pipelineOver({ idempotency: store, rateLimiter: new MemoryRateLimiter(systemClock) }, [tool], owner);
}

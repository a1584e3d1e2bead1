import { Redis } from 'ioredis';
import {
  PostgresIdempotencyStore,
  PostgresRateLimiter,
  migrate,
} from '../../../libs/adapters/postgres/index.js';
import { RedisIdempotencyStore, RedisRateLimiter } from '../../../libs/adapters/redis/index.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { ExecutionContext, NormalizedToolCall } from '../../../libs/core/types.js';
import { createCircuitBreakers } from '../../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../../libs/execution/outbound-limiter.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import type { IdempotencyStore } from '../../../libs/ports/idempotency-store.js';
import type { RateLimiter } from '../../../libs/ports/rate-limiter.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import { REDIS_URL } from '../../helpers/env.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { createTestRedis } from '../../helpers/redis.js';
import { STAGES } from '../../../libs/guards/stages.js';

/**
 * The full guard pipeline wired to real stores, as executors in production are: several pipelines
 * (one per simulated executor, each with its own owner id and its own client connection) share one
 * Redis or one Postgres.
 */
export interface Backend {
  readonly name: 'redis' | 'postgres';
  /** A new client of the shared store, as another executor would have. */
  connect(): { idempotency: IdempotencyStore; rateLimiter: RateLimiter };
  close(): Promise<void>;
}

export function redisBackend(): Backend {
  const test = createTestRedis('pipeline');
  const extra: Redis[] = [];
  return {
    name: 'redis',
    connect() {
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
      extra.push(redis);
      return {
        idempotency: new RedisIdempotencyStore(redis, {
          keyPrefix: test.prefix,
          abandonedRetentionMs: 60_000,
        }),
        rateLimiter: new RedisRateLimiter(redis, { keyPrefix: test.prefix }),
      };
    },
    async close() {
      const keys = await test.redis.keys(`${test.prefix}*`);
      if (keys.length > 0) await test.redis.del(...keys);
      await Promise.all(extra.map((r) => r.quit()));
      await test.close();
    },
  };
}

export async function postgresBackend(schema?: TestSchema): Promise<Backend> {
  const test = schema ?? (await createTestSchema('pipeline'));
  await migrate(test.pool);
  return {
    name: 'postgres',
    connect() {
      // One pool per schema is enough: pg hands each query its own connection, as separate executors would.
      return {
        idempotency: new PostgresIdempotencyStore(test.pool, { abandonedRetentionMs: 60_000 }),
        rateLimiter: new PostgresRateLimiter(test.pool),
      };
    },
    async close() {
      if (schema === undefined) await test.drop();
    },
  };
}

/** One executor: a pipeline with its own owner id and store clients. */
export function executor(backend: Backend, tools: readonly ToolDefinition[], owner: string): GuardPipeline {
  return pipelineOver(backend.connect(), tools, owner);
}

/**
 * A pipeline offering `tools` on the given stores, with no business rules and no outbound limits;
 * breakers need 20 calls to open, results are kept 60 s.
 */
export function pipelineOver(
  stores: { readonly idempotency: IdempotencyStore; readonly rateLimiter: RateLimiter },
  tools: readonly ToolDefinition[],
  owner: string,
): GuardPipeline {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  return new GuardPipeline(
    {
      tools: registry,
      idempotency: stores.idempotency,
      rateLimiter: stores.rateLimiter,
      policy: createPolicyEngine({ version: 'test' }, []),
      breakers: createCircuitBreakers({
        errorThresholdPercentage: 50,
        volumeThreshold: 20,
        resetTimeoutMs: 10_000,
        timeoutMs: false,
      }),
      outbound: createOutboundLimiter(stores.rateLimiter, {}, systemClock),
      clock: systemClock,
      owner,
      settings: { resultTtlMs: 60_000, leaseMarginMs: 2_000 },
    },
    STAGES,
  );
}

export function context(taskId: string, index = 0, step = 0): ExecutionContext {
  return {
    principal: { id: 'agent-1', tenant: 't1', kind: 'agent', scopes: [], roles: [] },
    tenant: 't1',
    taskId,
    step,
    index,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  };
}

export function toolCall(name: string, args: Record<string, unknown>, id = 'call-1'): NormalizedToolCall {
  return { id, name, arguments: args };
}

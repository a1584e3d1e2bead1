import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { PostgresCaseStore } from '../../../libs/adapters/postgres/case-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import type { CaseStore } from '../../../libs/ports/case-store.js';
import type { IdempotencyStore } from '../../../libs/ports/idempotency-store.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { createTestRedis, type TestRedis } from '../../helpers/redis.js';
import { busWiring, createEventStack, PARTITIONS, type EventStack } from '../audit-sink/event-stack.js';
import { dropTestRedis, redisTestStores } from '../executor/test-parts.js';

/** A principal signing key and the JWKS that verifies it, under key id `k1`. */
export function signingKeys(): { readonly privateKey: KeyObject; readonly jwks: { keys: JWK[] } } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey,
    jwks: { keys: [{ ...(publicKey.export({ format: 'jwk' }) as JWK), kid: 'k1', use: 'sig' }] },
  };
}

/**
 * What a reconciler and the operations on `stack` share in these tests: the stack's bus, codec and
 * topics, the given case store, idempotency store and tools, the system clock, a silent logger,
 * the stack's results topic as the one reply topic, results kept 10 min, and a retry backoff of 20
 * ms doubling to 200 ms. Each caller adds its instance's ids, schedule and reader.
 */
export function reconcilerDeps(
  stack: EventStack,
  parts: { readonly cases: CaseStore; readonly idempotency: IdempotencyStore; readonly tools: ToolRegistry },
) {
  return {
    ...busWiring(stack),
    cases: parts.cases,
    idempotency: parts.idempotency,
    tools: parts.tools,
    clock: systemClock,
    logger: silentLogger,
    replyTopics: { [stack.topics.results]: PARTITIONS.results },
    resultTtlMs: 600_000,
    backoff: { baseDelayMs: 20, maxDelayMs: 200 },
  };
}

/** The servers of a reconciler scenario, each under names of its own. */
export interface ReconcilerServers {
  readonly stack: EventStack;
  /** A schema with the service's tables (migrated). */
  readonly db: TestSchema;
  readonly redis: TestRedis;
  /** The executors' idempotency store on `redis` (abandoned claims remembered 10 min). */
  readonly idempotency: IdempotencyStore;
  /** The cases in `db`. */
  readonly cases: PostgresCaseStore;
  /** Deletes the topics, the Redis keys and the schema (stop what runs on them first). */
  close(): Promise<void>;
}

/** Topics, a migrated schema and a Redis prefix named after `name`, with the stores on them. */
export async function openReconcilerServers(name: string): Promise<ReconcilerServers> {
  const stack = await createEventStack(name);
  const db = await createTestSchema(name);
  await migrate(db.pool);
  const redis = createTestRedis(name);
  return {
    stack,
    db,
    redis,
    idempotency: redisTestStores(redis).idempotency,
    cases: new PostgresCaseStore(db.pool, systemClock),
    async close() {
      await stack.close();
      await dropTestRedis(redis);
      await db.drop();
    },
  };
}

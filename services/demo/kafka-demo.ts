import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { PostgresAuditStore } from '../../libs/adapters/postgres/audit-store.js';
import { PostgresCaseStore } from '../../libs/adapters/postgres/case-store.js';
import { migrate } from '../../libs/adapters/postgres/migrate.js';
import { RedisFactStore, RedisIdempotencyStore, RedisRateLimiter } from '../../libs/adapters/redis/index.js';
import { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import { systemClock } from '../../libs/core/system-clock.js';
import { RegistryEventCodec } from '../../libs/events/registry-codec.js';
import { topicNames } from '../../libs/events/topics.js';
import { buildStoreCatalog } from '../catalog/store-catalog.js';
import { createPostgresDownstreams } from '../downstreams/postgres/postgres-downstreams.js';
import { createTopology } from '../embedded/topology.js';
import type { TopologyLogger } from '../embedded/topology-logger.js';
import type { DemoConfig } from './config.js';
import type { DemoToolgate } from './demo-toolgate.js';
import { checkServers } from './server-checks.js';

/**
 * The story's toolgate on real servers: Kafka topics (Avro through the schema registry), Redis for
 * idempotency claims and rate budgets, Postgres for the audit log, reconciliation cases and the fake
 * store's services (the payment ledger among them). Each run is isolated: its own topic prefix, Redis key prefix and
 * Postgres schema, all named `demo_<hex>`, so runs never see each other's calls or payments. The
 * schema, topics, keys, registry subjects and consumer groups are left behind for inspection with
 * the toolgate CLI (the run prints how, see follow-up.ts) until `npm run demo -- --clean-up <id>`
 * (clean-up.ts) removes them.
 *
 * Rejects with ServerUnavailableError naming every missing server before anything is created.
 * `options.runId` replaces the random `demo_<hex>` name (a test passes its own unique name so it
 * can remove the schema, topics and keys afterwards); it must be lowercase letters, digits and `_`.
 */
export async function startKafkaDemo(
  servers: DemoConfig['servers'],
  logger: TopologyLogger,
  announce: (line: string) => void,
  options: { readonly runId?: string } = {},
): Promise<DemoToolgate> {
  const runId = options.runId ?? `demo_${randomBytes(4).toString('hex')}`;
  // The name is quoted into SQL and used as a topic prefix: only characters valid in both.
  if (!/^[a-z_][a-z0-9_]*$/.test(runId)) throw new Error(`invalid demo run id ${JSON.stringify(runId)}`);
  await checkServers(servers);
  const clock = systemClock;
  const closers: Array<() => Promise<unknown>> = [];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  };
  try {
    const admin = new pg.Client({ connectionString: servers.databaseUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA "${runId}"`);
    } finally {
      await admin.end();
    }
    const pool = new pg.Pool({
      connectionString: servers.databaseUrl,
      max: 10,
      options: `-c search_path="${runId}"`,
    });
    closers.push(() => pool.end());
    await migrate(pool);
    const downstreams = await createPostgresDownstreams(pool, { clock });
    const redis = new Redis(servers.redisUrl, { maxRetriesPerRequest: 2 });
    closers.push(() => redis.quit());
    const keyPrefix = `${runId}:`;
    const bus = new KafkaEventBus({ brokers: servers.kafkaBrokers, clientId: runId, logger });
    closers.push(() => bus.close());
    const topics = topicNames(runId);
    const codec = await RegistryEventCodec.create({ url: servers.schemaRegistryUrl, topics });
    const auditStore = new PostgresAuditStore(pool);
    const topology = createTopology({
      bus,
      codec,
      topics,
      partitions: { calls: 6, results: 3, audit: 3, dlq: 1 },
      idempotency: new RedisIdempotencyStore(redis, { keyPrefix }),
      rateLimiter: new RedisRateLimiter(redis, { keyPrefix }),
      facts: new RedisFactStore(redis, { keyPrefix }),
      auditStore,
      caseStore: new PostgresCaseStore(pool, clock),
      catalog: buildStoreCatalog(downstreams, clock),
      clock,
      logger,
      deploymentId: runId,
    });
    closers.push(() => topology.stop());
    announce(
      `  kafka mode: topics ${topics.calls}, …; Postgres schema "${runId}"; Redis keys ${keyPrefix}*; joining groups…`,
    );
    await topology.start();
    return {
      mode: 'kafka',
      kafkaRun: { runId, servers },
      client: topology.client,
      downstreams,
      auditStore,
      awaitAudited: (ids, timeoutMs) => topology.awaitAudited(ids, timeoutMs ?? 60_000),
      stop: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

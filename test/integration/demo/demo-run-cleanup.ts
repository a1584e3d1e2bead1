import type { Redis } from 'ioredis';
import pg from 'pg';
import type { TopicNames } from '../../../libs/events/topics.js';
import { deleteRunSubjects } from '../../../services/demo/clean-up.js';
import type { TestKafka } from '../../helpers/kafka.js';

/** Every key under `prefix`, by SCAN (never KEYS, which blocks a shared server). */
export async function scanKeys(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/**
 * Removes the time to live of every key under `prefix` (a rate budget's key expires by itself a
 * second after the budget is full again), so the keys counted now are the keys there later, however
 * long the steps in between take.
 */
export async function holdKeys(redis: Redis, prefix: string): Promise<void> {
  for (const key of await scanKeys(redis, prefix)) await redis.persist(key);
}

/** What one kafka-mode demo run created on the shared servers. */
export interface DemoRunResources {
  /** The run's name: Postgres schema, topic prefix, Redis key prefix (`<runId>:`). */
  readonly runId: string;
  readonly topics: TopicNames;
  readonly kafka: TestKafka;
  readonly redis: Redis;
  readonly databaseUrl: string;
  /** Confluent-compatible registry base URL; the run's value subjects are deleted there. */
  readonly registryUrl: string;
}

/**
 * Removes a finished run's topics, schema-registry subjects, Redis keys and Postgres schema, so a
 * long-lived set of servers does not fill up with test runs. Run it after the toolgate stopped.
 * Each removal is attempted even when an earlier one failed; the first failure is rethrown at the
 * end. Consumer group offsets are left to the broker's retention (they name only this run).
 */
export async function removeDemoRun(r: DemoRunResources): Promise<void> {
  const failures: unknown[] = [];
  const attempt = async (work: () => Promise<unknown>): Promise<void> => {
    await work().catch((err: unknown) => failures.push(err));
  };
  await attempt(async () => {
    const admin = await r.kafka.admin();
    const existing = new Set(await admin.listTopics());
    const mine = Object.values(r.topics).filter((t) => existing.has(t));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine, timeout: 10_000 });
  });
  await attempt(() => deleteRunSubjects(r.registryUrl, r.runId));
  await attempt(async () => {
    const keys = await scanKeys(r.redis, `${r.runId}:`);
    for (let i = 0; i < keys.length; i += 500) await r.redis.del(...keys.slice(i, i + 500));
  });
  await attempt(async () => {
    const admin = new pg.Client({ connectionString: r.databaseUrl });
    await admin.connect();
    try {
      // DROP is not an UPDATE/DELETE/TRUNCATE: the audit table's append-only triggers do not fire.
      await admin.query(`DROP SCHEMA IF EXISTS "${r.runId}" CASCADE`);
    } finally {
      await admin.end();
    }
  });
  if (failures.length > 0) throw failures[0];
}

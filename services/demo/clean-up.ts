import { Kafka, logLevel, type Admin } from 'kafkajs';
import { Redis } from 'ioredis';
import pg from 'pg';
import { topicNames, valueSubject } from '../../libs/events/topics.js';
import { replyGroupId } from '../sdk/client-options.js';
import { DEMO_RUN_ID, type DemoConfig } from './config.js';

/** What {@link cleanUpDemoRun} removed; every list is sorted. */
export interface CleanUpReport {
  readonly runId: string;
  /** Kafka topics named `<runId>.…`. */
  readonly topics: readonly string[];
  /** Consumer groups of the run's executors, audit sink, reconcilers and SDK client. */
  readonly groups: readonly string[];
  /** Schema-registry subjects named `<runId>.…` (the topics' value schemas). */
  readonly subjects: readonly string[];
  /** How many Redis keys under `<runId>:` were deleted. */
  readonly redisKeys: number;
  /** Whether the Postgres schema `<runId>` existed and was dropped. */
  readonly schemaDropped: boolean;
}

/**
 * Removes exactly what one kafka-mode run (kafka-demo.ts) created: the topics named `<runId>.…`,
 * the consumer groups named `<runId>-…` and its SDK client's reply group, the registry subjects
 * `<runId>.…`, the Redis keys `<runId>:…` (by SCAN, never KEYS) and the Postgres schema `<runId>`
 * with everything in it. Names of other runs never match: a run id is `demo_` plus
 * `[a-z0-9_]`, and every prefix ends in a separator no run id contains. Safe to repeat: a second
 * call finds nothing and removes nothing. Every removal is attempted even when one fails; the
 * first failure is then rethrown. Run it when the run has stopped (its consumers would otherwise
 * recreate what was removed).
 */
export async function cleanUpDemoRun(servers: DemoConfig['servers'], runId: string): Promise<CleanUpReport> {
  if (!DEMO_RUN_ID.test(runId)) throw new Error(`not a demo run id: ${JSON.stringify(runId)}`);
  const failures: unknown[] = [];
  const attempt = async <T>(work: () => Promise<T>, fallback: T): Promise<T> =>
    work().catch((err: unknown) => {
      failures.push(err);
      return fallback;
    });
  const admin = new Kafka({
    clientId: `${runId}-clean-up`,
    brokers: [...servers.kafkaBrokers],
    logLevel: logLevel.NOTHING,
  }).admin();
  let kafka: { topics: string[]; groups: string[] } = { topics: [], groups: [] };
  try {
    await admin.connect();
    kafka = {
      groups: await attempt(() => deleteGroups(admin, runId), []),
      topics: await attempt(() => deleteTopics(admin, runId), []),
    };
  } catch (err) {
    failures.push(err);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  const subjects = await attempt(() => deleteRunSubjects(servers.schemaRegistryUrl, runId), []);
  const redisKeys = await attempt(() => deleteRedisKeys(servers.redisUrl, `${runId}:`), 0);
  const schemaDropped = await attempt(() => dropSchema(servers.databaseUrl, runId), false);
  if (failures.length > 0) throw failures[0];
  return { runId, ...kafka, subjects, redisKeys, schemaDropped };
}

/** The lines `npm run demo -- --clean-up <id>` prints for a report. */
export function cleanUpLines(report: CleanUpReport): string[] {
  const list = (names: readonly string[]): string => (names.length === 0 ? '' : `: ${names.join(', ')}`);
  const nothing =
    report.topics.length + report.groups.length + report.subjects.length + report.redisKeys === 0 &&
    !report.schemaDropped;
  return [
    `Clean-up of demo run ${report.runId}:`,
    `  Kafka topics deleted:       ${report.topics.length}${list(report.topics)}`,
    `  consumer groups deleted:    ${report.groups.length}${list(report.groups)}`,
    `  registry subjects deleted:  ${report.subjects.length}${list(report.subjects)}`,
    `  Redis keys deleted:         ${report.redisKeys} (${report.runId}:*)`,
    `  Postgres schema:            ${report.schemaDropped ? `"${report.runId}" dropped` : `no schema "${report.runId}"`}`,
    ...(nothing
      ? [`Nothing was left of ${report.runId} (already cleaned up, or not the id a --kafka run printed).`]
      : []),
  ];
}

async function deleteTopics(admin: Admin, runId: string): Promise<string[]> {
  const mine = (await admin.listTopics()).filter((t) => t.startsWith(`${runId}.`)).sort();
  if (mine.length > 0) await admin.deleteTopics({ topics: mine, timeout: 15_000 });
  return mine;
}

async function deleteGroups(admin: Admin, runId: string): Promise<string[]> {
  const reply = replyGroupId(`${runId}-agent`);
  const { groups } = await admin.listGroups();
  const mine = groups
    .map((g) => g.groupId)
    .filter((g) => g.startsWith(`${runId}-`) || g === reply)
    .sort();
  if (mine.length > 0) await admin.deleteGroups(mine);
  return mine;
}

/**
 * Soft-deletes, then permanently deletes, the value subjects of a run's four topics, and resolves
 * with those that existed. Named, not listed: a registry's subject listing may be cut short
 * (Apicurio returns at most 1,000 names), so a run's subjects can be missing from it.
 */
export async function deleteRunSubjects(registryUrl: string, runId: string): Promise<string[]> {
  const base = registryUrl.replace(/\/+$/, '');
  const topics = topicNames(runId);
  const deleted: string[] = [];
  for (const subject of [topics.calls, topics.results, topics.audit, topics.dlq].map(valueSubject)) {
    const url = `${base}/subjects/${encodeURIComponent(subject)}`;
    let existed = false;
    for (const suffix of ['', '?permanent=true']) {
      const res = await fetch(`${url}${suffix}`, { method: 'DELETE' });
      if (!res.ok && res.status !== 404)
        throw new Error(`schema registry DELETE ${subject}${suffix}: HTTP ${res.status}`);
      if (res.ok) existed = true;
    }
    if (existed) deleted.push(subject);
  }
  return deleted.sort();
}

async function deleteRedisKeys(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true });
  try {
    await redis.connect();
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) deleted += await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}

async function dropSchema(databaseUrl: string, schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (rowCount === 0) return false;
    // DROP is not an UPDATE/DELETE/TRUNCATE: the audit table's append-only triggers do not fire.
    await client.query(`DROP SCHEMA "${schema}" CASCADE`);
    return true;
  } finally {
    await client.end();
  }
}

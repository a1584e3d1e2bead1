import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { topicNames } from '../../../libs/events/topics.js';
import type { DemoToolgate } from '../../../services/demo/demo-toolgate.js';
import { startKafkaDemo } from '../../../services/demo/kafka-demo.js';
import { runRefundStory } from '../../../services/demo/story.js';
import { quietLogger } from '../../../services/embedded/topology-logger.js';
import { DATABASE_URL, kafkaBrokers, REDIS_URL, schemaRegistryUrl } from '../../helpers/env.js';
import { createTestKafka, type TestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { REFUND_STORY_EXPECTATIONS, type RefundStoryRun } from '../../helpers/refund-story-expectations.js';
import { removeDemoRun, scanKeys } from './demo-run-cleanup.js';

/**
 * The demo's refund story in kafka mode: Kafka topics with Avro through the schema registry, Redis
 * idempotency claims and rate budgets, Postgres audit log and payment ledger. The run is named by
 * the test (`demo_it_<12 hex>`), so its topics, schema and keys are its own and removed afterwards.
 */
const runId = uniqueName('demo_it');
const topics = topicNames(runId);

let toolgate: DemoToolgate | undefined;
let run: RefundStoryRun;
let pool: pg.Pool;
let redis: Redis;
let kafka: TestKafka;
/** Redis keys the run left under its prefix, counted before clean-up. */
let redisKeys: string[];

beforeAll(async () => {
  kafka = createTestKafka('demo-it');
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const lines: string[] = [];
  toolgate = await startKafkaDemo(
    {
      kafkaBrokers: kafkaBrokers(),
      schemaRegistryUrl: schemaRegistryUrl(),
      redisUrl: REDIS_URL,
      databaseUrl: DATABASE_URL,
    },
    quietLogger,
    (line) => lines.push(line),
    { runId },
  );
  const report = await runRefundStory(toolgate, (line) => lines.push(line));
  run = { report, lines, downstreams: toolgate.downstreams };
  // The test's own connections to the run's schema, so every Postgres fact is read back from the server.
  pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2, options: `-c search_path="${runId}"` });
  redisKeys = await scanKeys(redis, `${runId}:`);
}, 90_000);

afterAll(async () => {
  await toolgate?.stop();
  await pool?.end();
  await removeDemoRun({
    runId,
    topics,
    kafka,
    redis,
    databaseUrl: DATABASE_URL,
    registryUrl: schemaRegistryUrl(),
  });
  await redis.quit();
  await kafka.close();
}, 60_000);

describe('the refund story on Kafka, the schema registry, Redis and Postgres', () => {
  for (const expectation of REFUND_STORY_EXPECTATIONS) {
    it(expectation.name, () => expectation.check(run));
  }

  it('ran in kafka mode under its own topic prefix, Postgres schema and Redis key prefix', async () => {
    expect(run.report.mode).toBe('kafka');
    expect(run.lines.join('\n')).toContain(`topics ${topics.calls}, …; Postgres schema "${runId}"`);
    const existing = await (await kafka.admin()).listTopics();
    expect(existing).toEqual(expect.arrayContaining(Object.values(topics)));
    const { rows } = await pool.query<{ schema: string }>('SELECT current_schema() AS schema');
    expect(rows[0]!.schema).toBe(runId);
    // Idempotency claims of the calls that reached the tool live in Redis, under the run's prefix only.
    expect(redisKeys.length).toBeGreaterThan(0);
  });

  it('the payment ledger in Postgres has one refund row per paid order: O-5512 once, O-7788 once despite the retry', async () => {
    const { rows } = await pool.query<{ order_id: string; amount_cents: string; keys: string }>(
      `SELECT order_id, sum(amount_cents)::text AS amount_cents, count(*)::text AS keys
         FROM store_refunds WHERE tenant = 't1' GROUP BY order_id ORDER BY order_id`,
    );
    expect(rows.map((r) => [r.order_id, Number(r.amount_cents), Number(r.keys)])).toEqual([
      ['O-5512', 4999, 1],
      ['O-7788', 3450, 1],
      ['O-9001', 2500, 1],
    ]);
  });

  it('every audit row in Postgres is one of the story’s calls and carries that call’s trace id', async () => {
    const calls = run.report.steps.flatMap((s) => s.calls);
    const { rows } = await pool.query<{ call_id: string; trace_id: string }>(
      'SELECT call_id, trace_id FROM audit_records ORDER BY chain, seq',
    );
    expect(rows).toHaveLength(calls.length);
    const expected = new Map(calls.map((c) => [c.callId, c.traceId]));
    expect(expected.size).toBe(calls.length);
    for (const row of rows) {
      expect(expected.has(row.call_id), `audit row for unknown call ${row.call_id}`).toBe(true);
      expect(row.trace_id).toBe(expected.get(row.call_id));
    }
    expect(new Set(rows.map((r) => r.call_id)).size).toBe(calls.length);
    // One trace per turn: the two calls of step 5 share theirs, the five turns do not.
    const step5 = run.report.steps.find((s) => s.step === 5)!.calls;
    expect(step5[0]!.traceId).toBe(step5[1]!.traceId);
    expect(new Set(calls.map((c) => c.traceId)).size).toBe(5);
  });

  it('the audit hash chain in Postgres verifies and links every row to the one before', async () => {
    const report = await new PostgresAuditStore(pool).verify({ chain: 't1' });
    expect(report).toMatchObject({ ok: true, checked: 6 });
    const { rows } = await pool.query<{ seq: string; prev_hash: string; hash: string }>(
      `SELECT seq::text, prev_hash, hash FROM audit_records WHERE chain = 't1' ORDER BY seq`,
    );
    expect(rows.map((r) => Number(r.seq))).toEqual([1, 2, 3, 4, 5, 6]);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.prev_hash).toBe(rows[i - 1]!.hash);
  });
});

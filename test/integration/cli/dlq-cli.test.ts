import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { PostgresCaseStore } from '../../../libs/adapters/postgres/case-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { RedisIdempotencyStore } from '../../../libs/adapters/redis/redis-idempotency-store.js';
import { argumentsFingerprint } from '../../../libs/core/idempotency-key.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import { toAuditEnvelope } from '../../../services/audit-sink/audit-envelope.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import { REDIS_URL, schemaRegistryUrl } from '../../helpers/env.js';
import { consumeMessages, createTestKafka } from '../../helpers/kafka.js';
import { deadLetteredRefund, leaveUnresolved } from '../../helpers/dead-lettered-refund.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { createTestRedis, type TestRedis } from '../../helpers/redis.js';
import { cli } from '../../unit/cli/capture.js';
import { databaseUrlFor } from './cli-env.js';

/**
 * The dlq commands wired to the real servers: cases in Postgres, the executors' idempotency records
 * in Redis, audit records and results on Kafka through the schema registry, the store catalog as
 * the tool resolver. Resolving and redriving real cases through the CLI.
 */
let db: TestSchema;
let redis: TestRedis;
let cases: PostgresCaseStore;
let idempotency: RedisIdempotencyStore;
let topics: TopicNames;
let env: Record<string, string>;
const kafka = createTestKafka('cli-dlq');
const ARGS = { order_id: 'O-5512', amount: 12.5, reason: 'damaged' };

beforeAll(async () => {
  db = await createTestSchema('cli_dlq');
  await migrate(db.pool);
  redis = createTestRedis('cli_dlq');
  cases = new PostgresCaseStore(db.pool, systemClock);
  idempotency = new RedisIdempotencyStore(redis.redis, { keyPrefix: redis.prefix });
  const prefix = uniqueName('cli_dlq');
  topics = topicNames(prefix);
  env = {
    DATABASE_URL: databaseUrlFor(db.schema),
    KAFKA_BROKERS: kafka.brokers.join(','),
    SCHEMA_REGISTRY_URL: schemaRegistryUrl(),
    REDIS_URL,
    REDIS_KEY_PREFIX: redis.prefix,
    TOOLGATE_TOPIC_PREFIX: prefix,
  };
  expect((await cli(['topics', 'create', '--partitions', '2'], { env })).code).toBe(EXIT.ok);
});

afterAll(async () => {
  await (await kafka.admin()).deleteTopics({ topics: Object.values(topics), timeout: 10_000 });
  await kafka.close();
  await redis.close();
  await db.drop();
});

let n = 0;

/** Polls `probe` every 20 ms until it gives a value (at most 10 s). */
async function eventually<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('not within 10 s');
}

/** A case for a dead-lettered issue_refund whose outcome is unknown, with an UNRESOLVED record in Redis. */
async function unresolvedRefund(): Promise<ReconciliationCase> {
  n += 1;
  const callId = uniqueName(`call${n}`);
  const idempotencyKey = uniqueName(`idem${n}`);
  const now = Date.now();
  const { case: c } = await cases.openFromDeadLetter(
    deadLetteredRefund({
      callId,
      providerCallId: `prov-${n}`,
      idempotencyKey,
      deadLetterId: uniqueName('dl'),
      replyTopic: topics.results,
      arguments: ARGS,
      nowMs: now,
      lastKnownStateJson: JSON.stringify({ toolVersion: '1.0.0' }),
    }),
  );
  await leaveUnresolved(idempotency, idempotencyKey, ARGS, Date.now(), 3_600_000);
  return c;
}

describe('dlq against Postgres, Kafka, the schema registry and Redis', () => {
  it('lists and shows a real case', async () => {
    const c = await unresolvedRefund();
    const list = await cli(['dlq', 'list', '--state', 'open', '--tool', 'issue_refund', '--json'], { env });
    expect(list.code).toBe(EXIT.ok);
    expect(list.json<{ cases: { caseId: string }[] }>().cases.map((x) => x.caseId)).toContain(c.caseId);
    const show = await cli(['dlq', 'show', c.caseId], { env });
    expect(show.code).toBe(EXIT.ok);
    expect(show.stdout).toMatch(new RegExp(`^case: +${c.caseId}\\n`));
    expect(show.stdout).toContain(`toolgate dlq resolve ${c.caseId}`);
  });

  it('resolves a case by hand: case resolved, Redis record settled, audit record and result published', async () => {
    const c = await unresolvedRefund();
    const result = {
      refund_id: 'R-88',
      order_id: 'O-5512',
      amount: 12.5,
      currency: 'USD',
      reason: 'damaged',
      status: 'succeeded',
      created_at: '2025-03-01T12:00:00Z',
    };
    const r = await cli(
      [
        'dlq',
        'resolve',
        c.caseId,
        '--outcome',
        'succeeded',
        '--by',
        'ann',
        '--note',
        'payments ledger shows refund R-88',
        '--result',
        JSON.stringify(result),
        '--json',
      ],
      { env },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(EXIT.ok);
    expect(r.json()).toMatchObject({
      ok: true,
      case: { caseId: c.caseId, state: 'resolved_succeeded' },
      delivery: { settled: true, audited: true, answered: true, complete: true },
    });

    const stored = await cases.get(c.caseId);
    expect(stored).toMatchObject({
      state: 'resolved_succeeded',
      resolution: { by: 'operator:ann', note: 'payments ledger shows refund R-88' },
    });
    // A retry of the call now gets the verdict instead of UNRESOLVED.
    const retry = await idempotency.claim(
      c.idempotencyKey!,
      argumentsFingerprint(ARGS),
      'executor-2',
      60_000,
    );
    expect(retry).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'SUCCESS', result: { refund_id: 'R-88' } },
    });

    // This is the first test of the file to publish, so the first record of each topic is its own.
    const codec = await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics });
    const [auditMessage] = await consumeMessages(
      kafka.consumer({ groupId: kafka.uniqueGroupId('audit') }),
      topics.audit,
      1,
    );
    const audit = await codec.decode('audit', auditMessage!.value!);
    expect(audit).toMatchObject({
      callId: c.callId,
      outcome: 'SUCCESS',
      recordId: `operator:${c.caseId}:v2`,
      principalId: 'operator:ann',
      source: 'operator',
    });
    // The original caller and the case stay findable in the record.
    expect(c.principalId).toBeTruthy();
    expect(audit.decisions[0]!.reason).toContain(`case ${c.caseId}; on behalf of ${c.principalId}`);
    expect(audit.decisions[0]!.reason).toContain('payments ledger shows refund R-88');
    // Stored as the audit sink stores it, the operator's row is found by their principal and by source.
    await new PostgresAuditStore(db.pool).append([toAuditEnvelope(audit)]);
    const byPrincipal = await cli(['audit', 'query', '--principal', 'operator:ann', '--json'], { env });
    expect(byPrincipal.json<{ records: { recordId: string }[] }>().records.map((x) => x.recordId)).toEqual([
      `operator:${c.caseId}:v2`,
    ]);
    const bySource = await cli(['audit', 'query', '--source', 'ops', '--json'], { env });
    expect(bySource.json<{ records: { recordId: string }[] }>().records.map((x) => x.recordId)).toEqual([
      `operator:${c.caseId}:v2`,
    ]);
    const byExecutor = await cli(['audit', 'query', '--source', 'executor', '--json'], { env });
    expect(byExecutor.json<{ count: number }>().count).toBe(0);
    const human = await cli(['audit', 'query', '--source', 'ops', '--principal', 'operator:ann'], { env });
    expect(human.code).toBe(EXIT.ok);
    expect(human.stdout).toContain('1 record.');
    const [resultMessage] = await consumeMessages(
      kafka.consumer({ groupId: kafka.uniqueGroupId('results') }),
      topics.results,
      1,
    );
    expect(resultMessage!.partition).toBe(1);
    const event = await codec.decode('results', resultMessage!.value!);
    expect(event).toMatchObject({ callId: c.callId, outcome: 'SUCCESS', source: 'operator' });
    expect(JSON.parse(event.payloadJson!)).toMatchObject({ refund_id: 'R-88' });
  });

  it('redrives an UNRESOLVED refund (forwards-key): re-submitted, its UNRESOLVED answer retired; refuses to resolve it twice', async () => {
    const c = await unresolvedRefund();
    const escalated = await cases.transition(
      c.caseId,
      { to: 'needs_manual', by: 'status-check', note: 'status checks exhausted' },
      { state: 'open', version: c.version },
    );
    expect(escalated.ok).toBe(true);

    const shown = await cli(['dlq', 'show', c.caseId], { env });
    expect(shown.stdout).toContain(
      `toolgate dlq redrive ${c.caseId} --by <you> --note "<why>" --assertion-file`,
    );

    // A re-submission is signed: without an assertion nothing moves.
    const unsigned = await cli(
      ['dlq', 'redrive', c.caseId, '--by', 'ann', '--note', 'payments API is back; run it again'],
      { env },
    );
    expect(unsigned.code).toBe(EXIT.usage);
    expect(unsigned.stderr).toContain('(needs-assertion)');
    expect((await cases.get(c.caseId))?.version).toBe(2);

    const r = await cli(
      [
        'dlq',
        'redrive',
        c.caseId,
        '--by',
        'ann',
        '--note',
        'payments API is back; run it again',
        '--assertion',
        'signed.principal.assertion',
      ],
      { env },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).toContain(`Redriven: case ${c.caseId} is now open (version 3).`);
    expect(r.stdout).toContain('re-submitted to the calls topic: yes');
    expect(r.stdout).toContain('audit record published:     yes');
    const reopened = await cases.get(c.caseId);
    expect(reopened?.state).toBe('open');
    expect(reopened?.history.at(-1)).toMatchObject({ from: 'needs_manual', to: 'open', by: 'operator:ann' });
    // The UNRESOLVED answer is gone, so the executor claims the re-submission afresh and runs it.
    const probe = await eventually(async () => {
      const claim = await idempotency.claim(c.idempotencyKey!, argumentsFingerprint(ARGS), 'probe', 60_000);
      return claim.kind === 'claimed' ? claim : undefined;
    });
    expect(probe.kind).toBe('claimed');
    expect(await idempotency.release(c.idempotencyKey!, 'probe')).toBe(true);
    const resubmitted = await consumeMessages(
      kafka.consumer({ groupId: kafka.uniqueGroupId('calls') }),
      topics.calls,
      1,
    );
    const codec = await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics });
    expect(await codec.decode('calls', resubmitted[0]!.value!)).toMatchObject({
      callId: c.callId,
      idempotencyKey: c.idempotencyKey,
      principalAssertion: 'signed.principal.assertion',
    });

    const failed = await cli(
      ['dlq', 'resolve', c.caseId, '--outcome', 'failed', '--by', 'bob', '--note', 'no refund in the ledger'],
      {
        env,
      },
    );
    expect(failed.code).toBe(EXIT.ok);
    const twice = await cli(
      ['dlq', 'resolve', c.caseId, '--outcome', 'succeeded', '--by', 'eve', '--note', 'maybe it did'],
      { env },
    );
    expect(twice.code).toBe(EXIT.failure);
    expect(twice.stderr).toContain(`cannot resolve case ${c.caseId}`);
    expect((await cases.get(c.caseId))?.state).toBe('resolved_failed');
  });

  it('a resolve whose broker is unreachable exits 3 before the case is touched', async () => {
    const c = await unresolvedRefund();
    const r = await cli(
      [
        'dlq',
        'resolve',
        c.caseId,
        '--outcome',
        'failed',
        '--by',
        'ann',
        '--note',
        'x',
        '--brokers',
        '127.0.0.1:1',
      ],
      {
        env,
      },
    );
    expect(r.code).toBe(EXIT.unreachable);
    expect(r.stderr).toContain('cannot connect to Kafka at 127.0.0.1:1');
    expect(await cases.get(c.caseId)).toMatchObject({ state: 'open', version: 1 });
  });
});

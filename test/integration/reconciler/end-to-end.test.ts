import { generateKeyPairSync } from 'node:crypto';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { PostgresCaseStore } from '../../../libs/adapters/postgres/case-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { RedisIdempotencyStore } from '../../../libs/adapters/redis/index.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { Principal } from '../../../libs/core/types.js';
import type { ToolCallRequestedEvent, ToolCallResultEvent } from '../../../libs/events/contracts.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { createAuditSink, type AuditSink } from '../../../services/audit-sink/audit-sink.js';
import type { Executor } from '../../../services/executor/executor.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import { createReconciler, type Reconciler } from '../../../services/reconciler/reconciler.js';
import { kafkaOriginalCalls } from '../../../libs/reconcile/original-call.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestRedis, type TestRedis } from '../../helpers/redis.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import {
  createEventStack,
  eventStackExecutor,
  eventually,
  PARTITIONS,
  type EventStack,
} from '../audit-sink/event-stack.js';
import { dropTestRedis, redisTestStores, testCatalog } from '../executor/test-parts.js';
import { signedRequest } from '../../unit/executor/call-requests.js';
import { FILING_SCOPE, FILINGS_DDL, filingTool } from './filings.js';

const ISSUER = 'agent-backend-e2e';
const AUDIENCE = 'toolgate-executor-e2e';
const TENANT = 't1';
const REPLY_PARTITION = 1;
const PRINCIPAL: Principal = {
  id: 'agent-7',
  tenant: TENANT,
  kind: 'agent',
  scopes: [FILING_SCOPE],
  roles: [],
};

/**
 * The whole loop on real servers: an executor runs a filing whose answer is lost (the service
 * records it, then accepts it a second later, but the client times out), reports it UNRESOLVED and
 * dead-letters it; the reconciler opens the case in Postgres, status-checks it on its schedule,
 * settles the idempotency record in Redis and answers the requester; the audit sink chains both
 * records. A duplicate of the call then gets the settled answer and the service sees one filing.
 */
describe('timed-out call → dead letter → case → status check → resolution, through the executor', () => {
  let stack: EventStack;
  let db: TestSchema;
  let redis: TestRedis;
  let executor: Executor;
  let reconciler: Reconciler;
  let sink: AuditSink;
  let cases: PostgresCaseStore;
  let audit: PostgresAuditStore;
  let request: ToolCallRequestedEvent;
  const submissions = { count: 0 };

  beforeAll(async () => {
    stack = await createEventStack('e2e_reconcile');
    db = await createTestSchema('e2e_reconcile');
    await migrate(db.pool);
    await db.pool.query(FILINGS_DDL);
    redis = createTestRedis('e2e_reconcile');
    const idempotency = new RedisIdempotencyStore(redis.redis, {
      keyPrefix: redis.prefix,
      abandonedRetentionMs: 600_000,
    });
    const registry = new ToolRegistry();
    registry.register(
      filingTool(db.pool, { loseAnswer: true, acceptAfterMs: 1_000, timeoutMs: 300, submissions }),
    );
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const jwks = { keys: [{ ...(publicKey.export({ format: 'jwk' }) as JWK), kid: 'k1', use: 'sig' }] };
    executor = eventStackExecutor(stack, {
      catalog: testCatalog(registry, 'e2e'),
      ...redisTestStores(redis),
      jwks,
      issuer: ISSUER,
      audience: AUDIENCE,
      settings: { maxConcurrency: 4 },
    });
    cases = new PostgresCaseStore(db.pool, systemClock);
    reconciler = createReconciler({
      subscriber: stack.bus,
      publisher: stack.bus,
      codec: stack.codec,
      topics: stack.topics,
      cases,
      idempotency,
      tools: registry,
      clock: systemClock,
      logger: silentLogger,
      reconcilerId: `${stack.prefix}-reconciler`,
      groupId: `${stack.prefix}-reconcilers`,
      replyTopics: { [stack.topics.results]: PARTITIONS.results },
      resultTtlMs: 600_000,
      checkScheduleMs: [300, 600, 1_200, 2_400, 4_800],
      pollIntervalMs: 50,
      backoff: { baseDelayMs: 20, maxDelayMs: 200 },
      // The dead letter keeps only the allow-listed `year`; the check reads the call back from Kafka.
      originalCalls: kafkaOriginalCalls({
        kafka: stack.kafka.kafka,
        codec: stack.codec,
        groupPrefix: `${stack.prefix}-reads`,
      }),
    });
    audit = new PostgresAuditStore(db.pool);
    sink = createAuditSink({
      subscriber: stack.bus,
      publisher: stack.bus,
      codec: stack.codec,
      topics: stack.topics,
      store: audit,
      logger: silentLogger,
      groupId: uniqueName('e2e_audit_sink'),
      backoff: { baseDelayMs: 20, maxDelayMs: 200 },
    });
    await Promise.all([executor.start(), reconciler.start(), sink.start()]);

    const args = { taxpayerId: 'TP-77', year: 2024 };
    const ctx = { tenant: TENANT, taskId: `${stack.prefix}-task`, step: 4, index: 0 };
    request = await signedRequest(
      {
        callId: `${stack.prefix}-call-1`,
        providerCallId: 'toolu_1',
        tool: 'submit_filing',
        toolVersion: null,
        argumentsJson: JSON.stringify(args),
        ...ctx,
        resourceKey: `${TENANT}:filing:TP-77`,
        traceId: '0af7651916cd43dd8448eb211c80319c',
        replyTopic: stack.topics.results,
        replyPartition: REPLY_PARTITION,
        deadlineMs: null,
        requestedAtMs: Date.now(),
      },
      PRINCIPAL,
      { key: privateKey, issuer: ISSUER, audience: AUDIENCE, kid: 'k1', ttlSeconds: 600 },
      {},
    );
  });

  afterAll(async () => {
    await Promise.all([executor.stop(), reconciler.stop(), sink.stop()]);
    await stack.close();
    await dropTestRedis(redis);
    await db.drop();
  });

  async function resultsFor(callId: string, count: number): Promise<ToolCallResultEvent[]> {
    return eventually(`${count} results for ${callId}`, async () => {
      const read = await stack.read('results', count, 10_000).catch(() => []);
      const mine = read.filter((r) => r.event.callId === callId);
      if (mine.length < count) return undefined;
      expect(mine.every((r) => r.partition === REPLY_PARTITION)).toBe(true);
      return mine.map((r) => r.event);
    });
  }

  it('answers UNRESOLVED first, then the reconciler supersedes it with the confirmed result', async () => {
    await stack.publish('calls', [{ key: request.resourceKey, event: request }]);

    const [first, second] = await resultsFor(request.callId, 2);
    expect(first).toMatchObject({ outcome: 'UNRESOLVED', source: 'executor', error: { code: 'UNRESOLVED' } });
    expect(second).toMatchObject({ outcome: 'SUCCESS', source: 'reconciler', toolInvocations: 0 });
    const confirmed = { confirmation: `CNF-${request.idempotencyKey.slice(-6)}`, status: 'accepted' };
    expect(JSON.parse(second!.payloadJson!)).toEqual(confirmed);

    const c = await eventually('the case resolved', async () => {
      const found = await cases.get({ callId: request.callId });
      return found?.state === 'resolved_succeeded' ? found : undefined;
    });
    expect(c).toMatchObject({
      reason: 'UNRESOLVED',
      idempotencyKey: request.idempotencyKey,
      principalId: 'agent-7',
    });
    expect(c.statusChecks.at(-1)!.answer).toEqual({ state: 'applied', result: confirmed });

    // Both records of the call are chained in the audit store, and the chain verifies.
    const records = await eventually('executor and reconciler records stored', async () => {
      const rows = await audit.query({ callId: request.callId });
      return rows.length >= 2 ? rows : undefined;
    });
    expect(records.map((r) => [r.source, r.record.outcome])).toEqual([
      ['executor', 'UNRESOLVED'],
      ['reconciler', 'SUCCESS'],
    ]);
    expect(await audit.verify({ chain: TENANT })).toMatchObject({ ok: true });
    const who = await audit.whoDid(request.resourceKey);
    expect(who.did.map((d) => [d.principalId, d.outcome])).toEqual([['agent-7', 'SUCCESS']]);
    expect(who.tried.map((d) => d.outcome)).toEqual(['UNRESOLVED']);
  });

  it('answers a duplicate of the call with the settled result, without a second filing', async () => {
    await stack.publish('calls', [{ key: request.resourceKey, event: request }]);
    const results = await resultsFor(request.callId, 3);
    expect(results[2]).toMatchObject({ outcome: 'DUPLICATE', source: 'executor', toolInvocations: 0 });
    expect(JSON.parse(results[2]!.payloadJson!)).toEqual({
      confirmation: `CNF-${request.idempotencyKey.slice(-6)}`,
      status: 'accepted',
    });
    const { rows } = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM filings');
    expect(Number(rows[0]!.n)).toBe(1);
    expect(submissions.count).toBe(1);
  });
});

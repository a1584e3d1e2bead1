import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import type { PostgresCaseStore } from '../../../libs/adapters/postgres/case-store.js';
import type { Principal } from '../../../libs/core/types.js';
import type { ToolCallRequestedEvent, ToolCallResultEvent } from '../../../libs/events/contracts.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { createAuditSink, type AuditSink } from '../../../services/audit-sink/audit-sink.js';
import type { Executor } from '../../../services/executor/executor.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import { createReconciler, type Reconciler } from '../../../services/reconciler/reconciler.js';
import { kafkaOriginalCalls } from '../../../libs/reconcile/original-call.js';
import { uniqueName } from '../../helpers/names.js';
import type { TestSchema } from '../../helpers/postgres.js';
import { busWiring, eventStackExecutor, eventually, type EventStack } from '../audit-sink/event-stack.js';
import { redisTestStores, testCatalog } from '../executor/test-parts.js';
import { signedRequest } from '../../unit/executor/call-requests.js';
import { FILING_SCOPE, FILINGS_DDL, filingTool } from './filings.js';
import {
  openReconcilerServers,
  reconcilerDeps,
  signingKeys,
  type ReconcilerServers,
} from './reconciler-parts.js';

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
  let servers: ReconcilerServers;
  let stack: EventStack;
  let db: TestSchema;
  let executor: Executor;
  let reconciler: Reconciler;
  let sink: AuditSink;
  let cases: PostgresCaseStore;
  let audit: PostgresAuditStore;
  let request: ToolCallRequestedEvent;
  const submissions = { count: 0 };

  beforeAll(async () => {
    servers = await openReconcilerServers('e2e_reconcile');
    ({ stack, db, cases } = servers);
    await db.pool.query(FILINGS_DDL);
    const registry = new ToolRegistry();
    registry.register(
      filingTool(db.pool, { loseAnswer: true, acceptAfterMs: 1_000, timeoutMs: 300, submissions }),
    );
    const { privateKey, jwks } = signingKeys();
    executor = eventStackExecutor(stack, {
      catalog: testCatalog(registry, 'e2e'),
      ...redisTestStores(servers.redis),
      jwks,
      issuer: ISSUER,
      audience: AUDIENCE,
      settings: { maxConcurrency: 4 },
    });
    reconciler = createReconciler({
      ...reconcilerDeps(stack, { cases, idempotency: servers.idempotency, tools: registry }),
      reconcilerId: `${stack.prefix}-reconciler`,
      groupId: `${stack.prefix}-reconcilers`,
      checkScheduleMs: [300, 600, 1_200, 2_400, 4_800],
      pollIntervalMs: 50,
      // The dead letter keeps only the allow-listed `year`; the check reads the call back from Kafka.
      originalCalls: kafkaOriginalCalls({
        kafka: stack.kafka.kafka,
        codec: stack.codec,
        groupPrefix: `${stack.prefix}-reads`,
      }),
    });
    audit = new PostgresAuditStore(db.pool);
    sink = createAuditSink({
      ...busWiring(stack),
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
    await servers.close();
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

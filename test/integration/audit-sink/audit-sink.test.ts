import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { createAuditSink, type AuditSink } from '../../../services/audit-sink/audit-sink.js';
import type { Logger } from '../../../libs/ports/logger.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { auditEvent, T0 } from './audit-events.js';
import { busWiring, createEventStack, eventually, type EventStack } from './event-stack.js';

interface Captured {
  readonly warnings: string[];
}

function capturingLogger(captured: Captured): Logger {
  const ignore = (): void => undefined;
  return {
    debug: ignore,
    info: ignore,
    error: ignore,
    warn: (_obj, msg) => captured.warnings.push(msg ?? ''),
  };
}

describe('audit sink on Kafka and Postgres', () => {
  let stack: EventStack;
  let db: TestSchema;
  let store: PostgresAuditStore;
  let sink: AuditSink;
  const captured: Captured = { warnings: [] };

  beforeAll(async () => {
    stack = await createEventStack('audit_sink');
    db = await createTestSchema('audit_sink');
    await migrate(db.pool);
    store = new PostgresAuditStore(db.pool);
    sink = createAuditSink({
      ...busWiring(stack),
      store,
      logger: capturingLogger(captured),
      groupId: uniqueName('audit_sink'),
      producerId: 'audit-sink-test',
      partitionsConcurrently: 2,
      backoff: { baseDelayMs: 20, maxDelayMs: 200 },
    });
    await sink.start();
  });

  afterAll(async () => {
    await sink.stop();
    await stack.close();
    await db.drop();
  });

  it('appends audit events to each tenant chain in publish order; the chains verify', async () => {
    const events = [
      ...Array.from({ length: 6 }, (_, i) => ({ key: 'ta', event: auditEvent(`ta-${i}`, 'ta', i) })),
      ...Array.from({ length: 4 }, (_, i) => ({ key: 'tb', event: auditEvent(`tb-${i}`, 'tb', i) })),
    ];
    await stack.publish('audit', events);
    const stored = await eventually('10 records stored', async () => {
      const rows = await store.query({ limit: 1_000 });
      return rows.length >= 10 ? rows : undefined;
    });
    expect(stored).toHaveLength(10);
    const chainA = stored.filter((r) => r.chain === 'ta').sort((a, b) => a.seq - b.seq);
    expect(chainA.map((r) => r.recordId)).toEqual(['ta-0', 'ta-1', 'ta-2', 'ta-3', 'ta-4', 'ta-5']);
    expect(chainA.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    const first = chainA[0]!;
    expect(first).toMatchObject({ source: 'executor', producerId: 'executor-1', recordedAtMs: T0 + 13 });
    expect(first.record).toMatchObject({
      callId: 'call-ta-0',
      arguments: { order_id: 'O-0', amount: 10, note: '[redacted]' },
      result: { refundId: 'R-0' },
      outcome: 'SUCCESS',
    });
    expect(first.record).not.toHaveProperty('errorCode');
    expect(first.record).not.toHaveProperty('policy');
    expect(chainA[1]!.record.decisions[1]).toEqual({
      stage: 'business-rules',
      decision: 'refuse',
      reason: 'over $50',
      code: 'POLICY_VIOLATION',
      durationMs: 0.2,
    });
    expect(await store.verify()).toMatchObject({ ok: true, checked: 10 });
    const who = await store.whoDid('ta:order:O-2');
    expect(who.did.map((d) => d.recordId)).toEqual(['ta-2']);
  });

  it('stores a redelivered batch once: a second group re-reading the topic appends nothing', async () => {
    const before = await store.query({ limit: 1_000 });
    // The same records again (a producer retry), then a fresh member of another group reads the whole log.
    await stack.publish('audit', [
      { key: 'ta', event: auditEvent('ta-0', 'ta', 0) },
      { key: 'tb', event: auditEvent('tb-3', 'tb', 3) },
    ]);
    const again = createAuditSink({
      ...busWiring(stack),
      store,
      logger: capturingLogger({ warnings: [] }),
      groupId: uniqueName('audit_sink_replay'),
    });
    await again.start();
    // Markers published after the replay started: once each is stored, everything before it on its
    // partition has been handled by both groups.
    await stack.publish('audit', [
      { key: 'ta', event: auditEvent('ta-marker', 'ta', 100) },
      { key: 'tb', event: auditEvent('tb-marker', 'tb', 100) },
    ]);
    await eventually('markers stored', async () => {
      const rows = await store.query({ limit: 1_000 });
      return rows.some((r) => r.recordId === 'ta-marker') && rows.some((r) => r.recordId === 'tb-marker');
    });
    await again.stop();
    const after = await store.query({ limit: 1_000 });
    expect(after).toHaveLength(before.length + 2);
    expect(new Set(after.map((r) => r.recordId)).size).toBe(after.length);
    expect(await store.verify()).toMatchObject({ ok: true, checked: after.length });
  });

  it('dead-letters poison as POISON and keeps going on the same partition', async () => {
    const bad = auditEvent('tc-bad', 'tc', 1);
    await stack.bus.publish(stack.topics.audit, [
      { key: 'tc', value: await stack.codec.encode('audit', auditEvent('tc-0', 'tc', 0)) },
      { key: 'tc', value: Buffer.from('definitely not avro') },
      { key: 'tc', value: await stack.codec.encode('audit', { ...bad, argumentsJson: '[1, 2]' }) },
      {
        key: 'tc',
        value: await stack.codec.encode('audit', { ...bad, recordId: 'tc-empty-principal', principalId: '' }),
      },
      { key: 'tc', value: await stack.codec.encode('audit', auditEvent('tc-1', 'tc', 2)) },
    ]);
    const letters = await stack.read('dlq', 3);
    expect(letters.map((l) => l.event.reason)).toEqual(['POISON', 'POISON', 'POISON']);
    expect(letters.map((l) => l.event.errorCode)).toEqual([
      'MALFORMED_EVENT',
      'MALFORMED_EVENT',
      'MALFORMED_EVENT',
    ]);
    const [garbage, notObject, noPrincipal] = letters.map((l) => l.event);
    expect(Buffer.from(garbage!.rawPayloadBase64!, 'base64').toString()).toBe('definitely not avro');
    expect(garbage!.tenant).toBeNull();
    expect(notObject).toMatchObject({ callId: null, tenant: 'tc', originalTopic: stack.topics.audit });
    expect(notObject!.errorMessage).toMatch(/argumentsJson is not a JSON object/);
    expect(JSON.parse(noPrincipal!.lastKnownStateJson!)).toMatchObject({
      recordId: 'tc-empty-principal',
      decoded: true,
    });
    expect(noPrincipal!.errorMessage).toMatch(/principalId/);
    const tc = await eventually('the records around the poison stored', async () => {
      const rows = await store.query({ tenant: 'tc' });
      return rows.length >= 2 ? rows : undefined;
    });
    expect(tc.map((r) => r.recordId)).toEqual(['tc-0', 'tc-1']);
    expect(await store.verify({ chain: 'tc' })).toMatchObject({ ok: true, checked: 2 });
  });

  it("stores a record's policy context as it was published, null fields absent; the chain verifies", async () => {
    const judged = {
      ...auditEvent('te-0', 'te', 0),
      policy: {
        version: 'refunds-2026-03-01',
        roles: ['support', 'refunds:small'],
        facts: { refunded_on_order: '99.98', refunds_today: '3', net_adjustment: '-0.0001' },
        ruleId: 'refund-support-limit',
        shadow: { version: 'refunds-2026-04-01', decision: 'refuse', ruleId: 'refund-cap-per-order' },
      },
    };
    const notJudged = {
      ...auditEvent('te-1', 'te', 1),
      policy: {
        version: 'v7',
        roles: null,
        facts: null,
        ruleId: null,
        shadow: { version: 'v8', decision: 'allow', ruleId: null },
      },
    };
    await stack.publish('audit', [
      { key: 'te', event: judged },
      { key: 'te', event: notJudged },
    ]);
    const te = await eventually('the records with a policy context stored', async () => {
      const rows = await store.query({ tenant: 'te' });
      return rows.length >= 2 ? rows : undefined;
    });
    expect(te.map((r) => r.recordId)).toEqual(['te-0', 'te-1']);
    expect(te[0]!.record.policy).toStrictEqual(judged.policy);
    expect(te[1]!.record.policy).toStrictEqual({
      version: 'v7',
      shadow: { version: 'v8', decision: 'allow' },
    });
    expect(await store.verify({ chain: 'te' })).toMatchObject({ ok: true, checked: 2 });
  });
});

describe('audit sink while the store is unreachable', () => {
  it('does not commit, backs off and retries, then stores everything once the store answers', async () => {
    const stack = await createEventStack('audit_sink_down');
    // A schema without the audit table: every append fails as if the store were down.
    const db = await createTestSchema('audit_sink_down');
    const store = new PostgresAuditStore(db.pool);
    const captured: Captured = { warnings: [] };
    const sink = createAuditSink({
      ...busWiring(stack),
      store,
      logger: capturingLogger(captured),
      groupId: uniqueName('audit_sink_down'),
      backoff: { baseDelayMs: 20, maxDelayMs: 100 },
    });
    try {
      await sink.start();
      await stack.publish(
        'audit',
        Array.from({ length: 5 }, (_, i) => ({ key: 'td', event: auditEvent(`td-${i}`, 'td', i) })),
      );
      await eventually(
        'append retried',
        () =>
          captured.warnings.filter((w) => w === 'appending audit records failed; retrying').length >= 3 ||
          undefined,
      );
      await migrate(db.pool);
      const rows = await eventually('records stored after the store came back', async () => {
        const stored = await store.query({ tenant: 'td' });
        return stored.length >= 5 ? stored : undefined;
      });
      expect(rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(await store.verify()).toMatchObject({ ok: true, checked: 5 });
    } finally {
      await sink.stop();
      await stack.close();
      await db.drop();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { MemoryAuditStore } from '../../../libs/adapters/memory/audit-store.js';
import { outcomeForCode } from '../../../libs/core/errors.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import type { OutgoingMessage } from '../../../libs/ports/event-bus.js';
import { toAuditEnvelope } from '../../../services/audit-sink/audit-envelope.js';
import { kafkaAuditPublisher } from '../../../services/mcp-gateway/audit-publisher.js';
import {
  REQUEST_OUTCOMES,
  type McpRequestRecord,
  type RequestOutcome,
} from '../../../services/mcp-gateway/observer.js';
import {
  REQUEST_AUDIT_OUTCOMES,
  requestAuditEvent,
  requestAuditRecord,
  UNAUTHENTICATED_PRINCIPAL,
  UNIDENTIFIED_TENANT,
} from '../../../services/mcp-gateway/request-audit.js';

const FINISHED = 1_800_000_000_500;
const context = { freshCallId: 'fresh-id-1', finishedAtMs: FINISHED };

const base: McpRequestRecord = {
  method: 'tools/list',
  outcome: 'ok',
  protocolVersion: '2026-07-28',
  clientName: 'some-ide',
  principalId: 'user-ada',
  tenant: 'acme',
  durationMs: 12,
};

/** A request record of each outcome, as the gateway reports it. */
const BY_OUTCOME: Readonly<Record<RequestOutcome, McpRequestRecord>> = {
  ok: base,
  'tool-success': {
    ...base,
    method: 'tools/call',
    outcome: 'tool-success',
    tool: 'get_order_status',
    toolOutcome: 'SUCCESS',
    callId: 'call-7',
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    idempotencyKey: 'tg1:abc',
  },
  'tool-duplicate': {
    ...base,
    method: 'tools/call',
    outcome: 'tool-duplicate',
    tool: 'book',
    toolOutcome: 'DUPLICATE',
    callId: 'call-8',
  },
  'tool-refused': {
    ...base,
    method: 'tools/call',
    outcome: 'tool-refused',
    tool: 'purge_tenant',
    toolOutcome: 'UNKNOWN_TOOL',
    reason: 'UNKNOWN_TOOL',
  },
  'tool-failed': {
    ...base,
    method: 'tools/call',
    outcome: 'tool-failed',
    tool: 'book',
    toolOutcome: 'EXECUTION_ERROR',
    reason: 'DEPENDENCY_UNAVAILABLE',
  },
  'task-created': {
    ...base,
    method: 'tools/call',
    outcome: 'task-created',
    tool: 'slow_compute',
    callId: 'call-10',
  },
  'tool-unknown-outcome': {
    ...base,
    method: 'tools/call',
    outcome: 'tool-unknown-outcome',
    tool: 'book',
    toolOutcome: 'UNRESOLVED',
    reason: 'UNRESOLVED',
    callId: 'call-9',
  },
  'confirmation-required': { ...base, method: 'tools/call', outcome: 'confirmation-required', tool: 'purge' },
  unauthenticated: {
    method: 'other',
    outcome: 'unauthenticated',
    protocolVersion: 'unknown',
    clientName: 'unknown',
    reason: 'invalid_token',
    durationMs: 3,
  },
  forbidden: { ...base, method: 'initialize', outcome: 'forbidden', reason: 'insufficient_scope' },
  rejected: {
    method: 'other',
    outcome: 'rejected',
    protocolVersion: 'unknown',
    clientName: 'unknown',
    reason: 'host_or_origin',
    durationMs: 1,
  },
  error: { ...base, method: 'tools/call', outcome: 'error', tool: 'book' },
};

/** outcome / errorCode of each request outcome for the records above. */
const EXPECTED: Readonly<Record<RequestOutcome, readonly [string, string | undefined]>> = {
  ok: ['SUCCESS', undefined],
  'tool-success': ['SUCCESS', undefined],
  'tool-duplicate': ['DUPLICATE', undefined],
  'tool-refused': ['UNKNOWN_TOOL', 'UNKNOWN_TOOL'],
  'tool-failed': ['EXECUTION_ERROR', 'DEPENDENCY_UNAVAILABLE'],
  'tool-unknown-outcome': ['UNRESOLVED', 'UNRESOLVED'],
  'task-created': ['UNRESOLVED', 'UNRESOLVED'],
  'confirmation-required': ['POLICY_VIOLATION', 'POLICY_VIOLATION'],
  unauthenticated: ['UNAUTHORIZED', 'INVALID_PRINCIPAL'],
  forbidden: ['UNAUTHORIZED', 'UNAUTHORIZED'],
  rejected: ['SCHEMA_INVALID', 'SCHEMA_INVALID'],
  error: ['EXECUTION_ERROR', 'INTERNAL'],
};

describe('requestAuditRecord: one audit record per MCP request', () => {
  it('maps every request outcome, and each error code belongs to its outcome', () => {
    expect(Object.keys(BY_OUTCOME).sort()).toEqual([...REQUEST_OUTCOMES].sort());
    expect(Object.keys(REQUEST_AUDIT_OUTCOMES).sort()).toEqual([...REQUEST_OUTCOMES].sort());
    for (const outcome of REQUEST_OUTCOMES) {
      const record = requestAuditRecord(BY_OUTCOME[outcome], context);
      expect([record.outcome, record.errorCode], outcome).toEqual(EXPECTED[outcome]);
      if (record.errorCode !== undefined)
        expect(outcomeForCode(record.errorCode), outcome).toBe(record.outcome);
      expect(record.result, outcome).toMatchObject({ requestOutcome: outcome });
    }
  });

  it('falls back to the table for a refused or failed call without toolgate outcome or code', () => {
    const refused = requestAuditRecord(
      { ...BY_OUTCOME['tool-refused'], toolOutcome: 'SUCCESS', reason: 'not-a-code' },
      context,
    );
    expect([refused.outcome, refused.errorCode]).toEqual(['POLICY_VIOLATION', 'POLICY_VIOLATION']);
    const failed = requestAuditRecord({ ...BY_OUTCOME['tool-failed'], reason: undefined }, context);
    expect([failed.outcome, failed.errorCode]).toEqual(['EXECUTION_ERROR', 'INTERNAL']);
  });

  it('links a published tools/call by its call id, and keeps no argument, result or resource key', () => {
    const record = requestAuditRecord(BY_OUTCOME['tool-success'], context);
    expect(record).toEqual({
      callId: 'call-7',
      tool: 'get_order_status',
      principalId: 'user-ada',
      tenant: 'acme',
      taskId: '',
      step: 0,
      index: 0,
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      idempotencyKey: 'tg1:abc',
      arguments: {},
      result: { requestOutcome: 'tool-success' },
      outcome: 'SUCCESS',
      decisions: [],
      attempts: [],
      startedAtMs: FINISHED - 12,
      finishedAtMs: FINISHED,
      client: { name: 'some-ide', protocolVersion: '2026-07-28', method: 'tools/call' },
    });
  });

  it('gives a request without a published call the fresh id and `mcp:<method>` as its tool', () => {
    const list = requestAuditRecord(base, context);
    expect(list).toMatchObject({ callId: 'fresh-id-1', tool: 'mcp:tools/list', traceId: '' });
    // A tools/call refused before its tool name was read.
    expect(requestAuditRecord({ ...BY_OUTCOME.unauthenticated, method: 'tools/call' }, context).tool).toBe(
      'mcp:tools/call',
    );
    // A refused tool keeps its (bounded) name, never a call id of its own.
    const refused = requestAuditRecord({ ...BY_OUTCOME['tool-refused'], tool: 'x'.repeat(5000) }, context);
    expect(refused.callId).toBe('fresh-id-1');
    expect(refused.tool).toHaveLength(200);
  });

  it('files an unidentified caller under `unauthenticated` in the `_unidentified` chain', () => {
    for (const outcome of ['unauthenticated', 'rejected'] as const) {
      expect(requestAuditRecord(BY_OUTCOME[outcome], context)).toMatchObject({
        principalId: UNAUTHENTICATED_PRINCIPAL,
        tenant: UNIDENTIFIED_TENANT,
        result: { requestOutcome: outcome, reason: BY_OUTCOME[outcome].reason },
        client: { name: 'unknown', protocolVersion: 'unknown', method: 'other' },
      });
    }
    expect(UNIDENTIFIED_TENANT).toBe('_unidentified');
  });

  it('becomes a source mcp-gateway event the codec round-trips and the audit store chains and verifies', async () => {
    const codec = new LocalEventCodec();
    const store = new MemoryAuditStore();
    const events = REQUEST_OUTCOMES.map((outcome, i) =>
      requestAuditEvent(requestAuditRecord(BY_OUTCOME[outcome], { ...context, freshCallId: `fresh-${i}` }), {
        recordId: `rec-${i}`,
        producerId: 'gateway-1',
      }),
    );
    for (const event of events) {
      expect(event).toMatchObject({ source: 'mcp-gateway', producerId: 'gateway-1', argumentsJson: '{}' });
      const decoded = await codec.decode('audit', await codec.encode('audit', event));
      // The gateway's records carry no policy context (only the guard pipeline's do).
      expect(event).not.toHaveProperty('policy');
      expect(decoded).toEqual({ ...event, policy: null });
      await store.append([toAuditEnvelope(decoded)]);
    }
    const stored = await store.query({ source: 'mcp-gateway', limit: 100 });
    expect(stored).toHaveLength(REQUEST_OUTCOMES.length);
    expect(stored.find((r) => r.recordId === 'rec-1')!.record.client).toEqual({
      name: 'some-ide',
      protocolVersion: '2026-07-28',
      method: 'tools/call',
    });
    expect(new Set(stored.map((r) => r.chain))).toEqual(new Set(['acme', UNIDENTIFIED_TENANT]));
    expect(await store.verify()).toMatchObject({ ok: true, checked: REQUEST_OUTCOMES.length });
  });

  it('decodes an executor event without the field as client null, stored without it', async () => {
    const codec = new LocalEventCodec();
    const event = requestAuditEvent(requestAuditRecord(base, context), { recordId: 'r', producerId: 'p' });
    const { client: _client, ...withoutClient } = event;
    const decoded = await codec.decode('audit', await codec.encode('audit', withoutClient));
    expect(decoded.client).toBeNull();
    expect(toAuditEnvelope(decoded).record).not.toHaveProperty('client');
  });
});

/** Lets the publisher run up to its first wait, so `advance` has a sleeper to wake. */
async function untilAsleep(clock: ManualClock): Promise<void> {
  while (clock.pendingSleepers === 0) await new Promise((resolve) => setImmediate(resolve));
}

/** A promise and whether it has settled yet (its rejection is handled, and read through `promise`). */
function settledState<T>(promise: Promise<T>): { readonly promise: Promise<T>; readonly settled: boolean } {
  const state = { promise, settled: false };
  promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

describe('kafkaAuditPublisher', () => {
  const record = requestAuditRecord(BY_OUTCOME['tool-success'], context);

  it('retries with one record id until the broker acknowledges, keyed by the tenant', async () => {
    const sent: OutgoingMessage[] = [];
    let failures = 2;
    const codec = new LocalEventCodec();
    const publish = kafkaAuditPublisher({
      publisher: {
        publish: (_topic, messages) => {
          sent.push(...messages);
          return failures-- > 0 ? Promise.reject(new Error('broker away')) : Promise.resolve();
        },
      },
      codec,
      topic: 'tg.audit',
      producerId: 'gateway-1',
      backoff: { baseDelayMs: 1, maxDelayMs: 2 },
      clock: systemClock,
    });
    await publish(record);
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((m) => m.key))).toEqual(new Set(['acme']));
    const ids = await Promise.all(sent.map(async (m) => (await codec.decode('audit', m.value)).recordId));
    expect(new Set(ids).size).toBe(1);
  });

  it('gives up once its bound passed, also when a publish never answers', async () => {
    const clock = new ManualClock(FINISHED);
    const never = kafkaAuditPublisher({
      publisher: { publish: () => new Promise<void>(() => undefined) },
      codec: new LocalEventCodec(),
      topic: 'tg.audit',
      producerId: 'gateway-1',
      retryForMs: 50,
      backoff: { baseDelayMs: 5, maxDelayMs: 10 },
      clock,
    });
    const hung = settledState(never(record));
    await untilAsleep(clock);
    await clock.advance(49);
    expect(hung.settled).toBe(false);
    await clock.advance(1);
    await expect(hung.promise).rejects.toThrow(/not acknowledged within 50 ms/);

    const attempts: number[] = [];
    const failing = kafkaAuditPublisher({
      publisher: {
        publish: () => {
          attempts.push(clock.now() - FINISHED - 50);
          return Promise.reject(new Error('broker away'));
        },
      },
      codec: new LocalEventCodec(),
      topic: 'tg.audit',
      producerId: 'gateway-1',
      retryForMs: 60,
      backoff: { baseDelayMs: 5, maxDelayMs: 10 },
      clock,
    });
    const refused = settledState(failing(record));
    await untilAsleep(clock);
    await clock.advance(59);
    expect(refused.settled).toBe(false);
    await clock.advance(1);
    await expect(refused.promise).rejects.toThrow(/not acknowledged within 60 ms/);
    // Retried after 5, then every 10 ms, up to the bound and not after it.
    expect(attempts).toEqual([0, 5, 15, 25, 35, 45, 55]);
  });
});

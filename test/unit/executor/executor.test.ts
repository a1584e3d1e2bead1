import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tokenEquivalents } from '../../../libs/cost/token-equivalents.js';
import { frame } from '../../../libs/events/wire-format.js';
import {
  createHarness,
  flakyPublisher,
  outageCodec,
  PRINCIPAL,
  REPLY_PARTITION,
  stockTool,
  TRACE_ID,
  type Harness,
} from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('executor on the memory bus', () => {
  it('answers every call of a turn on the reply partition, audits each, and carries the trace', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool]);
    const requests = await Promise.all([
      h.request({ sku: 'A', seq: 1, delta: -1 }, { index: 0 }),
      h.request({ sku: 'B', seq: 1, delta: -2 }, { index: 1 }),
      h.request({ sku: 'C', seq: 1, delta: 3 }, { index: 2 }),
    ]);
    await h.publishCalls(requests);
    await h.executor().start();

    const results = await h.read('results', 3);
    expect(results.map((r) => r.event.callId).sort()).toEqual(requests.map((r) => r.callId).sort());
    for (const { message, event } of results) {
      expect(message.partition).toBe(REPLY_PARTITION);
      expect(event.outcome).toBe('SUCCESS');
      expect(event.traceId).toBe(TRACE_ID);
      expect(event.source).toBe('executor');
      expect(event.producerId).toBe('executor-unit');
      expect(message.headers.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
      expect(message.headers.traceparent).not.toContain('00f067aa0ba902b7');
    }
    const audits = await h.read('audit', 3);
    expect(new Set(audits.map((a) => a.event.recordId)).size).toBe(3);
    for (const { message, event } of audits) {
      expect(event.traceId).toBe(TRACE_ID);
      expect(event.principalId).toBe(PRINCIPAL.id);
      expect(message.headers.traceparent).toContain(TRACE_ID);
      expect(JSON.parse(event.argumentsJson)).toMatchObject({ sku: expect.any(String), delta: '[redacted]' });
    }
    expect(stock.invocations).toHaveLength(3);
  });

  it('puts the token equivalents its metrics recorded on the result event, computing them only when the runner gives none', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool]);
    const recorded = { tokensIn: 12_345, tokensOut: 678 };
    const plain = await h.request({ sku: 'P', seq: 1, delta: 1 });
    const instrumented = await h.request({ sku: 'I', seq: 1, delta: 1 });
    await h.publishCalls([plain, instrumented]);
    await h
      .executor({
        // One run returns tokens of its own (as the instrumented runner does), the other none.
        aroundRuns: (runner) => ({
          async run(call, ctx, opts) {
            const { tokens: _dropped, ...ran } = await runner.run(call, ctx, opts);
            return call.id === instrumented.callId ? { ...ran, tokens: recorded } : ran;
          },
        }),
      })
      .start();

    const results = await h.read('results', 2);
    const byId = new Map(results.map((r) => [r.event.callId, r.event]));
    expect(byId.get(instrumented.callId)).toMatchObject(recorded);
    const computed = byId.get(plain.callId)!;
    expect(computed.outcome).toBe('SUCCESS');
    expect(computed.tokensIn).toBe(
      tokenEquivalents({}, { name: plain.tool, arguments: JSON.parse(plain.argumentsJson) }).tokensIn,
    );
    expect(computed.tokensOut).toBe(
      tokenEquivalents({ payload: JSON.parse(computed.payloadJson!) }).tokensOut,
    );
  });

  it('refuses a forged principal and a foreign tenant without reaching the tool', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool]);
    const good = await h.request({ sku: 'A', seq: 1, delta: 1 });
    const [header, payload] = good.principalAssertion.split('.');
    const forged = await h.request(
      { sku: 'A', seq: 2, delta: 1 },
      { principalAssertion: `${header}.${payload}.${Buffer.from('not a signature').toString('base64url')}` },
    );
    const unsigned = await h.request(
      { sku: 'A', seq: 3, delta: 1 },
      {
        principalAssertion: `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'tg-principal+jwt' })).toString('base64url')}.${payload}.`,
      },
    );
    const foreign = await h.request(
      { sku: 'A', seq: 4, delta: 1 },
      { principal: { ...PRINCIPAL, tenant: 't2' } },
    );
    await h.publishCalls([forged, unsigned, foreign]);
    await h.executor().start();

    const results = await h.read('results', 3);
    const byId = new Map(results.map((r) => [r.event.callId, r.event]));
    for (const request of [forged, unsigned]) {
      const result = byId.get(request.callId)!;
      expect(result.outcome).toBe('UNAUTHORIZED');
      expect(result.error).toMatchObject({ code: 'INVALID_PRINCIPAL', retryable: false, suggestedFix: null });
      expect(result.error!.message).not.toMatch(/signature|alg|expired/i);
      expect(result.toolInvocations).toBe(0);
    }
    expect(byId.get(foreign.callId)).toMatchObject({
      outcome: 'UNAUTHORIZED',
      error: { code: 'UNAUTHORIZED' },
    });
    const audits = await h.read('audit', 3);
    const principals = new Map(audits.map((a) => [a.event.callId, a.event.principalId]));
    expect(principals.get(forged.callId)).toBe('unverified');
    expect(principals.get(unsigned.callId)).toBe('unverified');
    expect(principals.get(foreign.callId)).toBe(PRINCIPAL.id);
    for (const { event } of audits) {
      expect(event.outcome).toBe('UNAUTHORIZED');
      // Refused by the first ingress stage: nothing after it ran, not even the tool lookup.
      expect(event.decisions).toEqual([
        expect.objectContaining({ stage: 'verify-principal', decision: 'refuse', code: event.errorCode }),
      ]);
      expect(event.argumentsJson).not.toContain('"A"');
    }
    expect(stock.invocations).toHaveLength(0);
  });

  it('refuses arguments that are not a JSON object as SCHEMA_INVALID, with an audit record', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool]);
    const array = await h.request(
      { sku: 'A', seq: 1, delta: 1 },
      { argumentsJson: '[1,2]', idempotencyKey: 'tg1:x' },
    );
    const text = await h.request(
      { sku: 'A', seq: 2, delta: 1 },
      { argumentsJson: '{"sku":', idempotencyKey: 'tg1:y' },
    );
    await h.publishCalls([array, text]);
    await h.executor().start();
    const results = await h.read('results', 2);
    for (const { event } of results) {
      expect(event.outcome).toBe('SCHEMA_INVALID');
      expect(event.error?.code).toBe('SCHEMA_INVALID');
    }
    const audits = await h.read('audit', 2);
    for (const { event } of audits) {
      expect(event.decisions.map((d) => `${d.stage}:${d.decision}`)).toEqual([
        'verify-principal:pass',
        'parse-arguments:refuse',
      ]);
    }
    expect(stock.invocations).toHaveLength(0);
  });

  it('dead-letters poison and keeps the partition flowing behind it', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool], 1);
    const before = await h.request({ sku: 'A', seq: 1, delta: 1 });
    const after = await h.request({ sku: 'A', seq: 2, delta: 1 });
    const valid = await h.codec.encode('calls', before);
    await h.publishCalls([before]);
    await h.publishRaw('t1:stock:A', Buffer.concat([Buffer.from([1]), valid.subarray(1)]));
    await h.publishRaw('t1:stock:A', frame(999, valid.subarray(5)));
    await h.publishRaw('t1:stock:A', valid.subarray(0, valid.length - 7));
    const oversized = Buffer.alloc(2 * 1024 * 1024, 7);
    await h.publishRaw('t1:stock:A', oversized);
    await h.publishCalls([after]);
    await h.executor().start();

    const results = await h.read('results', 2);
    expect(results.map((r) => [r.event.callId, r.event.outcome])).toEqual([
      [before.callId, 'SUCCESS'],
      [after.callId, 'SUCCESS'],
    ]);
    const dead = await h.read('dlq', 4);
    expect(dead.map((d) => d.event.reason)).toEqual(['POISON', 'POISON', 'POISON', 'POISON']);
    expect(dead.map((d) => d.event.originalOffset)).toEqual(['1', '2', '3', '4']);
    for (const { event } of dead) {
      expect(event.callId).toBeNull();
      expect(event.errorCode).toBe('MALFORMED_EVENT');
      expect(event.originalTopic).toBe(h.topics.calls);
      expect(event.originalKey).toBe('t1:stock:A');
      // The bytes stay on the calls topic (they may hold argument values): size and hash only.
      expect(event.rawPayloadBase64).toBeNull();
      expect(JSON.parse(event.lastKnownStateJson!)).toMatchObject({ capturedBytes: 0 });
    }
    expect(dead[0]!.event.errorMessage).toMatch(/magic byte/);
    expect(dead[1]!.event.errorMessage).toMatch(/schema id 999/);
    expect(dead[3]!.event.errorMessage).toMatch(/limit/);
    expect(JSON.parse(dead[3]!.event.lastKnownStateJson!)).toMatchObject({
      payloadBytes: oversized.length,
      payloadSha256: createHash('sha256').update(oversized).digest('hex'),
    });
    expect(stock.invocations.map((i) => i.seq)).toEqual([1, 2]);
  });

  it('keeps the first bytes of an undecodable message only when told to (POISON_CAPTURE_BYTES)', async () => {
    h = await createHarness([stockTool().tool], 1);
    const junk = Buffer.alloc(100_000, 9);
    await h.publishRaw('t1:stock:A', junk);
    await h.executor({ settings: { poisonCaptureBytes: 64 * 1024 } }).start();
    const [dead] = await h.read('dlq', 1);
    expect(Buffer.from(dead!.event.rawPayloadBase64!, 'base64')).toEqual(junk.subarray(0, 64 * 1024));
    expect(JSON.parse(dead!.event.lastKnownStateJson!)).toMatchObject({
      payloadBytes: 100_000,
      capturedBytes: 64 * 1024,
    });
  });

  it('waits out a schema-registry outage on the same message: no dead letter, no skipped call', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool], 1);
    let down = true;
    const codec = outageCodec(h.codec, () => down);
    const request = await h.request({ sku: 'A', seq: 1, delta: 1 });
    await h.publishCalls([request]);
    await h.executor({ codec }).start();
    // However long the retries take to come round: three of them, and still nothing ran.
    await vi.waitFor(() => expect(codec.failures()).toBeGreaterThan(2), { timeout: 20_000, interval: 10 });
    expect(stock.invocations).toHaveLength(0);
    down = false;
    const results = await h.read('results', 1);
    expect(results[0]!.event).toMatchObject({ callId: request.callId, outcome: 'SUCCESS' });
    expect(h.bus.endOffset(h.topics.dlq, 0)).toBe('0');
    expect(h.logs.some((l) => l.msg?.includes('schema registry unavailable'))).toBe(true);
  });

  it('dead-letters a request whose reply address is not a results topic, publishing nothing there', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool]);
    const toAudit = await h.request(
      { sku: 'A', seq: 1, delta: 1 },
      { replyTopic: h.topics.audit, replyPartition: 0 },
    );
    const badPartition = await h.request({ sku: 'B', seq: 1, delta: 1 }, { replyPartition: 99 });
    await h.publishCalls([toAudit, badPartition]);
    await h.executor().start();
    const dead = await h.read('dlq', 2);
    expect(dead.map((d) => d.event.callId).sort()).toEqual([toAudit.callId, badPartition.callId].sort());
    for (const { event } of dead) {
      expect(event.reason).toBe('POISON');
      expect(event.rawPayloadBase64).toBeNull();
      expect(event.requestJson).not.toContain('principalAssertion');
      expect(event.requestJson).not.toContain(toAudit.principalAssertion);
    }
    expect(h.bus.endOffset(h.topics.audit, 0)).toBe('0');
    expect(stock.invocations).toHaveLength(0);
  });

  it('reports a timed-out state-changing call UNRESOLVED and dead-letters it with its context', async () => {
    const stock = stockTool({ delayMs: 1_000, timeoutMs: 50 });
    h = await createHarness([stock.tool]);
    const request = await h.request({ sku: 'A', seq: 1, delta: -5 });
    await h.publishCalls([request]);
    await h.executor().start();
    const [result] = await h.read('results', 1);
    expect(result!.event.outcome).toBe('UNRESOLVED');
    expect(result!.event.error?.code).toBe('UNRESOLVED');
    const [dead] = await h.read('dlq', 1);
    const dl = dead!.event;
    expect(dl).toMatchObject({
      reason: 'UNRESOLVED',
      callId: request.callId,
      principalId: PRINCIPAL.id,
      traceId: TRACE_ID,
    });
    expect(dl.idempotencyKey).toBe(request.idempotencyKey);
    const summary = JSON.parse(dl.requestJson!);
    // Only the tool's audit allow-listed fields are kept; the full arguments stay on the calls topic.
    expect(summary.arguments).toEqual({ sku: 'A', seq: 1, delta: '[redacted]' });
    expect(summary).toMatchObject({ argumentsRedacted: true, argumentsFingerprint: expect.any(String) });
    expect(summary.principalAssertion).toBeUndefined();
    expect(JSON.stringify(dl)).not.toContain(request.principalAssertion);
    expect(JSON.parse(dl.attemptsJson)).toEqual([expect.objectContaining({ attempt: 1, result: 'TIMEOUT' })]);
    expect(JSON.parse(dl.lastKnownStateJson!)).toMatchObject({ outcome: 'UNRESOLVED', toolInvocations: 1 });
    expect(dead!.message.headers.traceparent).toContain(TRACE_ID);
  });

  it('runs calls of one resource key one at a time in publish order, other keys concurrently', async () => {
    const stock = stockTool({ delayMs: 15 });
    h = await createHarness([stock.tool], 1);
    const requests = [];
    for (let seq = 1; seq <= 5; seq++) {
      for (const sku of ['A', 'B', 'C', 'D']) requests.push(await h.request({ sku, seq, delta: 1 }));
    }
    await h.publishCalls(requests);
    await h.executor({ settings: { maxConcurrency: 4 } }).start();
    await h.read('results', 20);
    for (const sku of ['A', 'B', 'C', 'D']) {
      expect(stock.invocations.filter((i) => i.sku === sku).map((i) => i.seq)).toEqual([1, 2, 3, 4, 5]);
    }
    expect(stock.maxRunning()).toBeGreaterThan(1);
    expect(stock.maxRunning()).toBeLessThanOrEqual(4);
  });

  it('retries a failed result publish without re-running the tool or re-sending the audit record', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool]);
    let failures = 2;
    const publisher = flakyPublisher(h.bus, (topic) => topic === h!.topics.results && failures-- > 0);
    const request = await h.request({ sku: 'A', seq: 1, delta: 1 });
    await h.publishCalls([request]);
    await h.executor({ bus: publisher }).start();
    const results = await h.read('results', 1);
    expect(results[0]!.event.outcome).toBe('SUCCESS');
    expect(publisher.attempts.filter((a) => a.topic === h!.topics.results)).toHaveLength(3);
    expect(publisher.attempts.filter((a) => a.topic === h!.topics.audit)).toHaveLength(1);
    expect(stock.invocations).toHaveLength(1);
  });

  it('answers a redelivered call from the idempotency store: DUPLICATE, tool run once', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool]);
    const request = await h.request({ sku: 'A', seq: 1, delta: 1 });
    await h.publishCalls([request, request]);
    await h.executor().start();
    const results = await h.read('results', 2);
    expect(results.map((r) => r.event.outcome)).toEqual(['SUCCESS', 'DUPLICATE']);
    expect(results[1]!.event.payloadJson).toBe(results[0]!.event.payloadJson);
    const audits = await h.read('audit', 2);
    expect(new Set(audits.map((a) => a.event.recordId)).size).toBe(2);
    expect(stock.invocations).toHaveLength(1);
  });
});

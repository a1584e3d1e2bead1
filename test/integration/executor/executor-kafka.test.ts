import { afterEach, describe, expect, it } from 'vitest';
import { frame } from '../../../libs/events/wire-format.js';
import { createExecutorStack, PRINCIPAL, REPLY_PARTITION, type ExecutorStack } from './executor-stack.js';
import { ledgerRows } from './ledger-tools.js';

let stack: ExecutorStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('executor on Kafka, the schema registry, Redis and Postgres', () => {
  it('answers a 3-call turn on the reply partition, audits every attempt (a refusal included), keeps the trace', async () => {
    stack = await createExecutorStack('exec_turn');
    const turn = [
      await stack.request({ key: 'A', seq: 1, ref: 'r1' }, { index: 0 }),
      await stack.request({ key: 'B', seq: 1, ref: 'r2' }, { index: 1 }),
      // Refused by input validation (seq must be a non-negative integer): audited, never run.
      await stack.request({ key: 'C', seq: -1, ref: 'r3' }, { index: 2 }),
    ];
    const traceId = turn[0]!.traceId;
    const requests = turn.map((r) => ({ ...r, traceId }));
    await stack.executor().start();
    await stack.publishCalls(requests);

    const results = await stack.read('results', 3);
    const outcomes = new Map(results.map((r) => [r.event.callId, r.event.outcome]));
    expect(outcomes).toEqual(
      new Map([
        [requests[0]!.callId, 'SUCCESS'],
        [requests[1]!.callId, 'SUCCESS'],
        [requests[2]!.callId, 'SCHEMA_INVALID'],
      ]),
    );
    for (const r of results) {
      expect(r.partition).toBe(REPLY_PARTITION);
      expect(r.event.traceId).toBe(traceId);
      expect(r.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    }
    const audits = await stack.read('audit', 3);
    expect(audits.map((a) => a.event.callId).sort()).toEqual(requests.map((r) => r.callId).sort());
    expect(new Set(audits.map((a) => a.event.recordId)).size).toBe(3);
    for (const a of audits) {
      expect(a.event.traceId).toBe(traceId);
      expect(a.headers.traceparent).toContain(traceId);
      expect(a.event.principalId).toBe(PRINCIPAL.id);
      expect(a.event.producerId).toBe(`${stack.prefix}-executor`);
    }
    const refused = audits.find((a) => a.event.callId === requests[2]!.callId)!.event;
    expect(refused.outcome).toBe('SCHEMA_INVALID');
    expect(refused.decisions.at(-1)).toMatchObject({ stage: 'validate-input', decision: 'refuse' });
    expect((await ledgerRows(stack.db.pool)).map((row) => row.callRef).sort()).toEqual(['r1', 'r2']);
  });

  it('refuses a forged or unsigned principal as UNAUTHORIZED without calling the tool', async () => {
    stack = await createExecutorStack('exec_forged');
    const good = await stack.request({ key: 'A', seq: 1, ref: 'x' });
    const [header, payload] = good.principalAssertion.split('.') as [string, string, string];
    // The payload claims more scopes; the signature no longer matches.
    const widened = Buffer.from(
      JSON.stringify({
        ...JSON.parse(Buffer.from(payload, 'base64url').toString()),
        scopes: ['ledger:write', 'admin'],
      }),
    ).toString('base64url');
    const forged = await stack.request(
      { key: 'A', seq: 2, ref: 'forged' },
      { principalAssertion: `${header}.${widened}.${good.principalAssertion.split('.')[2]}` },
    );
    const unsigned = await stack.request(
      { key: 'A', seq: 3, ref: 'unsigned' },
      {
        principalAssertion: `${Buffer.from('{"alg":"none","typ":"tg-principal+jwt"}').toString('base64url')}.${payload}.`,
      },
    );
    const empty = await stack.request({ key: 'A', seq: 4, ref: 'empty' }, { principalAssertion: '' });
    await stack.executor().start();
    await stack.publishCalls([forged, unsigned, empty]);

    const results = await stack.read('results', 3);
    for (const { event } of results) {
      expect(event.outcome).toBe('UNAUTHORIZED');
      expect(event.error).toMatchObject({ code: 'INVALID_PRINCIPAL', retryable: false, suggestedFix: null });
      expect(event.toolInvocations).toBe(0);
    }
    const audits = await stack.read('audit', 3);
    expect(
      audits.every((a) => a.event.principalId === 'unverified' && a.event.outcome === 'UNAUTHORIZED'),
    ).toBe(true);
    expect(await ledgerRows(stack.db.pool)).toHaveLength(0);
  });

  it('dead-letters poison interleaved with good calls on one partition, and the good calls after it complete', async () => {
    stack = await createExecutorStack('exec_poison', { maxEventBytes: 64 * 1024 });
    const key = 't1:ledger:P';
    const calls = [];
    for (let seq = 1; seq <= 5; seq++) calls.push(await stack.request({ key: 'P', seq, ref: `p${seq}` }));
    const valid = await stack.codec.encode('calls', calls[0]!);
    const poison = [
      Buffer.concat([Buffer.from([9]), valid.subarray(1)]), // wrong magic byte
      frame(2_000_000_000, valid.subarray(5)), // a schema id the registry does not know
      valid.subarray(0, valid.length - 10), // truncated Avro
      Buffer.concat([valid, Buffer.alloc(100 * 1024, 1)]), // above the codec's 64 KiB limit
    ];
    await stack.publishCalls([calls[0]!]);
    for (const [i, bytes] of poison.entries()) {
      await stack.publishRaw(key, bytes);
      await stack.publishCalls([calls[i + 1]!]);
    }
    await stack.executor().start();

    const results = await stack.read('results', 5);
    expect(results.map((r) => [r.event.callId, r.event.outcome])).toEqual(
      calls.map((c) => [c.callId, 'SUCCESS']),
    );
    const dead = await stack.read('dlq', 4);
    expect(dead.map((d) => d.event.reason)).toEqual(['POISON', 'POISON', 'POISON', 'POISON']);
    expect(new Set(dead.map((d) => d.event.originalPartition)).size).toBe(1);
    expect(dead.map((d) => Number(d.event.originalOffset))).toEqual([1, 3, 5, 7]);
    expect(dead[0]!.event.errorMessage).toMatch(/magic byte/);
    expect(dead[1]!.event.errorMessage).toMatch(/unknown schema id/);
    expect(dead[2]!.event.errorMessage).toMatch(/undecodable/);
    expect(dead[3]!.event.errorMessage).toMatch(/limit/);
    for (const d of dead) {
      expect(d.event.originalKey).toBe(key);
      expect(d.event.callId).toBeNull();
      expect(d.event.rawPayloadBase64).toBeNull();
      expect(JSON.parse(d.event.lastKnownStateJson!)).toHaveProperty('payloadSha256');
    }
    expect((await ledgerRows(stack.db.pool)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('reports a timed-out state-changing call UNRESOLVED and dead-letters it, never as failed', async () => {
    stack = await createExecutorStack('exec_timeout');
    const request = await stack.request({ key: 'T', seq: 1, ref: 'slow' }, { tool: 'slow_append' });
    await stack.executor().start();
    await stack.publishCalls([request]);

    const [result] = await stack.read('results', 1);
    expect(result!.event).toMatchObject({
      callId: request.callId,
      outcome: 'UNRESOLVED',
      error: { code: 'UNRESOLVED', retryable: false },
    });
    expect(result!.event.outcome).not.toBe('EXECUTION_ERROR');
    const [dead] = await stack.read('dlq', 1);
    expect(dead!.event).toMatchObject({
      reason: 'UNRESOLVED',
      callId: request.callId,
      tool: 'slow_append',
      idempotencyKey: request.idempotencyKey,
      principalId: PRINCIPAL.id,
      traceId: request.traceId,
    });
    // The dead letter keeps the tool's audit allow-listed fields only (key, seq).
    expect(JSON.parse(dead!.event.requestJson!)).toMatchObject({
      arguments: { key: 'T', seq: 1, ref: '[redacted]' },
      argumentsRedacted: true,
    });
    expect(JSON.stringify(dead!.event)).not.toContain(request.principalAssertion);
    expect(JSON.parse(dead!.event.attemptsJson)).toEqual([expect.objectContaining({ result: 'TIMEOUT' })]);
    expect(dead!.headers.traceparent).toContain(request.traceId);
    const [audit] = await stack.read('audit', 1);
    expect(audit!.event.outcome).toBe('UNRESOLVED');
  });
});

import { CompressionTypes } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_EVENT_BYTES } from '../../../libs/events/size-limits.js';
import { REQUEST_SPAN_ID } from '../../unit/executor/call-requests.js';
import { createExecutorStack, REPLY_PARTITION, type ExecutorStack } from './executor-stack.js';
import { ledgerRows } from './ledger-tools.js';

let stack: ExecutorStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('executor: a call too large to run, produced raw (gzip) with a valid reply address', () => {
  it('is answered on its reply partition and dead-lettered; the call behind it on the same key runs', async () => {
    stack = await createExecutorStack('exec_oversized');
    const big = await stack.request({ key: 'A', seq: 1, ref: 'z'.repeat(5 * 1024 * 1024) }, { index: 0 });
    const good = await stack.request({ key: 'A', seq: 2, ref: 'small' }, { index: 1 });
    const bigBytes = await stack.codec.encode('calls', big);
    expect(bigBytes.length).toBeGreaterThan(DEFAULT_MAX_EVENT_BYTES);

    // Compressed, the 5 MB request is a small record batch the broker accepts.
    const producer = stack.kafka.producer();
    await producer.connect();
    await producer.send({
      topic: stack.topics.calls,
      compression: CompressionTypes.GZIP,
      messages: [
        {
          key: big.resourceKey,
          value: bigBytes,
          headers: { traceparent: `00-${big.traceId}-${REQUEST_SPAN_ID}-01` },
        },
      ],
    });
    await stack.publishCalls([good]);
    await stack.executor().start();

    const results = await stack.read('results', 2);
    const byCall = new Map(results.map((r) => [r.event.callId, r]));
    expect(byCall.get(good.callId)!.event.outcome).toBe('SUCCESS');
    const refused = byCall.get(big.callId)!;
    expect(refused.partition).toBe(REPLY_PARTITION);
    expect(refused.event).toMatchObject({
      outcome: 'SCHEMA_INVALID',
      providerCallId: big.providerCallId,
      toolInvocations: 0,
      error: { code: 'SCHEMA_INVALID', retryable: true },
    });
    expect(refused.event.error!.message).toContain(`${bigBytes.length} bytes`);

    const dead = await stack.read('dlq', 1);
    const letters = dead.filter((d) => d.event.callId === big.callId);
    expect(letters.map((d) => d.event.reason)).toEqual(['POISON']);
    // The dead letter names the request, not its 5 MB of arguments.
    expect(letters[0]!.event.requestJson!.length).toBeLessThan(10_000);

    const audits = await stack.read('audit', 2);
    expect(audits.map((a) => a.event.callId).sort()).toEqual([big.callId, good.callId].sort());
    expect((await ledgerRows(stack.db.pool)).map((row) => row.callRef)).toEqual(['small']);
    await producer.disconnect();
  });
});

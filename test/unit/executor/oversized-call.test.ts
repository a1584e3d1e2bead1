import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_EVENT_BYTES } from '../../../libs/events/size-limits.js';
import { createHarness, REPLY_PARTITION, stockTool, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const bigArguments = (sku: string) =>
  JSON.stringify({ sku, seq: 1, delta: 1, note: 'n'.repeat(2 * 1024 * 1024) });

describe('executor: a request above the size limit', () => {
  it('with a valid reply address: SCHEMA_INVALID result, audit record without arguments, small POISON dead letter', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool], 1);
    const big = await h.request({ sku: 'A', seq: 1, delta: 1 }, { argumentsJson: bigArguments('A') });
    const after = await h.request({ sku: 'A', seq: 2, delta: 1 });
    expect((await h.codec.encode('calls', big)).length).toBeGreaterThan(DEFAULT_MAX_EVENT_BYTES);
    await h.publishCalls([big, after]);
    await h.executor().start();

    const results = await h.read('results', 2);
    expect(results.map((r) => [r.event.callId, r.event.outcome, r.message.partition])).toEqual([
      [big.callId, 'SCHEMA_INVALID', REPLY_PARTITION],
      [after.callId, 'SUCCESS', REPLY_PARTITION],
    ]);
    expect(results[0]!.event.error).toMatchObject({ code: 'SCHEMA_INVALID', retryable: true });
    expect(results[0]!.event.error!.message).toMatch(
      /too large: its request is \d+ bytes, above the 1048576-byte limit/,
    );
    const audits = await h.read('audit', 2);
    const audited = audits.find((a) => a.event.callId === big.callId)!.event;
    expect(audited).toMatchObject({ outcome: 'SCHEMA_INVALID', argumentsJson: '{}' });
    const [dead] = await h.read('dlq', 1);
    expect(dead!.event).toMatchObject({ reason: 'POISON', callId: big.callId, rawPayloadBase64: null });
    expect(dead!.event.requestJson!.length).toBeLessThan(4_096);
    expect(stock.invocations.map((i) => i.seq)).toEqual([2]);
  });

  it('without a valid reply address: a POISON dead letter only, without the arguments', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool], 1);
    const big = await h.request(
      { sku: 'B', seq: 1, delta: 1 },
      { argumentsJson: bigArguments('B'), replyTopic: 'elsewhere' },
    );
    const after = await h.request({ sku: 'B', seq: 2, delta: 1 });
    await h.publishCalls([big, after]);
    await h.executor().start();

    const results = await h.read('results', 1);
    expect(results.map((r) => r.event.callId)).toEqual([after.callId]);
    const [dead] = await h.read('dlq', 1);
    expect(dead!.event).toMatchObject({ reason: 'POISON', callId: big.callId });
    expect(dead!.event.errorMessage).toMatch(/not a results topic/);
    expect(dead!.event.requestJson!.length).toBeLessThan(4_096);
  });
});

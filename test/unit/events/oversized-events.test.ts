import { describe, expect, it } from 'vitest';
import type { ToolCallRequestedEvent } from '../../../libs/events/contracts.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import { OversizedEventError } from '../../../libs/events/wire-format.js';

const request: ToolCallRequestedEvent = {
  callId: 'call-1',
  providerCallId: 'toolu_1',
  tool: 'adjust_stock',
  toolVersion: null,
  argumentsJson: JSON.stringify({ note: 'n'.repeat(4096) }),
  tenant: 't1',
  taskId: 'task-1',
  step: 0,
  index: 0,
  idempotencyKey: 'tg1:abc',
  resourceKey: 't1:stock:A',
  principalAssertion: 'a.b.c',
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  replyTopic: 'toolgate.results',
  replyPartition: 1,
  deadlineMs: null,
  requestedAtMs: 1,
};

describe('codecs and oversized events', () => {
  it('refuse an event above the limit as MALFORMED_EVENT, with the event read anyway', async () => {
    const codec = new LocalEventCodec(undefined, 1024);
    const bytes = await codec.encode('calls', request);
    const refused = await codec.decode('calls', bytes).catch((err: unknown) => err);

    expect(refused).toBeInstanceOf(OversizedEventError);
    expect(refused).toMatchObject({ code: 'MALFORMED_EVENT', bytes: bytes.length, maxBytes: 1024 });
    expect((refused as Error).message).toBe(
      `malformed event: message is ${bytes.length} bytes, above the 1024-byte limit`,
    );
    expect((refused as OversizedEventError).decoded).toEqual(request);
  });

  it('attach nothing when the oversized bytes are not an event of that kind', async () => {
    const codec = new LocalEventCodec(undefined, 1024);
    const refused = await codec.decode('calls', Buffer.alloc(4096, 7)).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OversizedEventError);
    expect((refused as OversizedEventError).decoded).toBeUndefined();
  });

  it('decode events within the limit as before', async () => {
    const codec = new LocalEventCodec();
    expect(await codec.decode('calls', await codec.encode('calls', request))).toEqual(request);
  });
});

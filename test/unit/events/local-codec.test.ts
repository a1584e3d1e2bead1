import { describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import { EVENT_KINDS } from '../../../libs/events/contracts.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import { frame } from '../../../libs/events/wire-format.js';
import { samples } from '../../fixtures/events.js';

async function refusal(p: Promise<unknown>): Promise<ToolgateError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolgateError);
  expect((err as ToolgateError).code).toBe('MALFORMED_EVENT');
  return err as ToolgateError;
}

describe('LocalEventCodec', () => {
  const codec = new LocalEventCodec(undefined, 4096);

  it.each(EVENT_KINDS)('round-trips a %s event through the wire format', async (kind) => {
    const bytes = await codec.encode(kind, samples[kind]);
    expect(bytes[0]).toBe(0);
    expect(await codec.decode(kind, bytes)).toEqual(samples[kind]);
  });

  it('refuses a wrong magic byte', async () => {
    const bytes = await codec.encode('calls', samples.calls);
    bytes[0] = 7;
    expect((await refusal(codec.decode('calls', bytes))).message).toMatch(/magic byte 7/);
  });

  it('refuses an unknown schema id', async () => {
    const bytes = frame(999, Buffer.from([1, 2, 3]));
    expect((await refusal(codec.decode('calls', bytes))).message).toMatch(/unknown schema id 999/);
  });

  it('refuses an event of another kind', async () => {
    const bytes = await codec.encode('audit', samples.audit);
    expect((await refusal(codec.decode('calls', bytes))).message).toMatch(/expected calls/);
  });

  it('refuses truncated Avro and short buffers', async () => {
    const bytes = await codec.encode('calls', samples.calls);
    await refusal(codec.decode('calls', bytes.subarray(0, bytes.length - 10)));
    await refusal(codec.decode('calls', Buffer.from([0, 0])));
    await refusal(codec.decode('calls', Buffer.alloc(0)));
  });

  it('refuses an oversized message before decoding it', async () => {
    const big = { ...samples.calls, argumentsJson: JSON.stringify({ blob: 'x'.repeat(10_000) }) };
    const bytes = await codec.encode('calls', big);
    expect((await refusal(codec.decode('calls', bytes))).message).toMatch(/above the 4096-byte limit/);
  });

  it('refuses a value that does not match the schema at encode time', async () => {
    await expect(codec.encode('calls', { ...samples.calls, step: 'two' } as never)).rejects.toThrow();
  });
});

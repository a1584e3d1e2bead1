import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { processBatchByKey } from '../../../libs/bus/keyed-processor.js';
import type { BatchControl, BusMessage, MessageBatch } from '../../../libs/ports/event-bus.js';

function batchOf(keys: readonly string[], firstOffset = 100): MessageBatch {
  return {
    topic: 't',
    partition: 0,
    messages: keys.map((key, i): BusMessage => ({
      topic: 't',
      partition: 0,
      offset: String(firstOffset + i),
      key,
      value: Buffer.from(String(i)),
      headers: {},
      timestampMs: 0,
    })),
  };
}

/** A BatchControl that records marks and turns stale on demand. */
function recordingControl(staleAfterMarks = Infinity) {
  const abort = new AbortController();
  const marked: string[] = [];
  let heartbeats = 0;
  const control: BatchControl = {
    markDone(offset) {
      marked.push(offset);
      if (marked.length >= staleAfterMarks) abort.abort();
    },
    heartbeat() {
      heartbeats += 1;
      return Promise.resolve();
    },
    isStale: () => abort.signal.aborted,
    signal: abort.signal,
  };
  return { control, marked, abort, heartbeats: () => heartbeats };
}

const keysArb = fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { minLength: 0, maxLength: 40 });

describe('processBatchByKey', () => {
  it('keeps per-key order, never overlaps a key, bounds concurrency, and marks everything once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        keysArb,
        fc.integer({ min: 1, max: 5 }),
        async (s, keys, maxConcurrency) => {
          const batch = batchOf(keys);
          const { control, marked, heartbeats } = recordingControl();
          const startedByKey = new Map<string, string[]>();
          const runningKeys = new Set<string>();
          let running = 0;
          let maxRunning = 0;
          const handle = async (m: BusMessage): Promise<void> => {
            expect(runningKeys.has(m.key)).toBe(false);
            runningKeys.add(m.key);
            running += 1;
            maxRunning = Math.max(maxRunning, running);
            startedByKey.set(m.key, [...(startedByKey.get(m.key) ?? []), m.offset]);
            await s.schedule(Promise.resolve(), `finish ${m.offset}`);
            running -= 1;
            runningKeys.delete(m.key);
          };
          const outcome = await s.waitFor(processBatchByKey(batch, control, handle, { maxConcurrency }));

          for (const [key, started] of startedByKey) {
            const published = batch.messages.filter((m) => m.key === key).map((m) => m.offset);
            expect(started).toEqual(published);
          }
          expect(maxRunning).toBeLessThanOrEqual(maxConcurrency);
          // Work-conserving: as many distinct keys as allowed start before anything finishes.
          expect(maxRunning).toBe(Math.min(maxConcurrency, new Set(keys).size));
          expect([...marked].sort()).toEqual(batch.messages.map((m) => m.offset).sort());
          expect(heartbeats()).toBe(keys.length);
          expect(outcome).toEqual({ handled: keys.length, failed: 0, notStarted: 0 });
        },
      ),
    );
  });

  it('runs strictly in offset order with maxConcurrency 1', async () => {
    const batch = batchOf(['a', 'b', 'a', 'c', 'b', 'a']);
    const { control, marked } = recordingControl();
    const started: string[] = [];
    await processBatchByKey(
      batch,
      control,
      async (m) => {
        started.push(m.offset);
        await Promise.resolve();
      },
      { maxConcurrency: 1 },
    );
    const offsets = batch.messages.map((m) => m.offset);
    expect(started).toEqual(offsets);
    expect(marked).toEqual(offsets);
  });

  it('starts nothing new once stale, lets running messages finish and marks them', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        keysArb.filter((k) => k.length > 0),
        fc.integer({ min: 1, max: 4 }),
        fc.nat(),
        async (s, keys, maxConcurrency, staleSeed) => {
          const staleAfter = (staleSeed % keys.length) + 1;
          const batch = batchOf(keys);
          const { control, marked } = recordingControl(staleAfter);
          const started: string[] = [];
          let startedAfterStale = 0;
          const handle = async (m: BusMessage): Promise<void> => {
            if (control.isStale()) startedAfterStale += 1;
            started.push(m.offset);
            await s.schedule(Promise.resolve(), `finish ${m.offset}`);
          };
          const outcome = await s.waitFor(processBatchByKey(batch, control, handle, { maxConcurrency }));
          expect(startedAfterStale).toBe(0);
          // Everything that started finished and was marked; the rest is left for redelivery.
          expect([...marked].sort()).toEqual([...started].sort());
          expect(outcome.handled).toBe(started.length);
          expect(outcome.notStarted).toBe(keys.length - started.length);
          expect(started.length).toBeGreaterThanOrEqual(staleAfter);
          expect(started.length).toBeLessThanOrEqual(Math.min(keys.length, staleAfter + maxConcurrency - 1));
        },
      ),
    );
  });

  it('reports a throwing handler through onError, still marks the message and keeps going', async () => {
    const batch = batchOf(['a', 'a', 'b', 'a']);
    const { control, marked } = recordingControl();
    const errors: Array<[unknown, string]> = [];
    const handled: string[] = [];
    const outcome = await processBatchByKey(
      batch,
      control,
      (m) => {
        if (m.offset === '100') throw new Error('sync boom');
        if (m.offset === '102') return Promise.reject(new Error('async boom'));
        handled.push(m.offset);
        return Promise.resolve();
      },
      {
        maxConcurrency: 2,
        onError: (error, m) => {
          errors.push([error, m.offset]);
          throw new Error('a failing hook is swallowed');
        },
      },
    );
    expect(errors.map(([e, o]) => [(e as Error).message, o])).toEqual([
      ['sync boom', '100'],
      ['async boom', '102'],
    ]);
    expect(handled).toEqual(['101', '103']);
    expect([...marked].sort()).toEqual(['100', '101', '102', '103']);
    expect(outcome).toEqual({ handled: 2, failed: 2, notStarted: 0 });
  });

  it('resolves at once for an empty batch and rejects a bad bound', async () => {
    const { control } = recordingControl();
    await expect(
      processBatchByKey(batchOf([]), control, () => Promise.resolve(), { maxConcurrency: 3 }),
    ).resolves.toEqual({ handled: 0, failed: 0, notStarted: 0 });
    expect(() =>
      processBatchByKey(batchOf(['a']), control, () => Promise.resolve(), { maxConcurrency: 0 }),
    ).toThrow(RangeError);
  });
});

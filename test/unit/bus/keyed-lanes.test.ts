import { describe, expect, it } from 'vitest';
import { KeyedLanes, type LaneSink } from '../../../libs/bus/keyed-lanes.js';
import type { BusLogger } from '../../../libs/bus/logger.js';
import type { BusMessage, MessageContext } from '../../../libs/ports/event-bus.js';

const silent: BusLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
const TP = { topic: 'calls', partition: 0 };
const TP2 = { topic: 'calls', partition: 1 };

function message(offset: number, key: string, tp = TP): BusMessage {
  return { ...tp, offset: String(offset), key, value: Buffer.from(key), headers: {}, timestampMs: 0 };
}

/** A handler whose messages finish when the test says so. */
function controlled() {
  const started: string[] = [];
  const finishers = new Map<string, (finished: boolean) => void>();
  const contexts = new Map<string, MessageContext>();
  let running = 0;
  let maxRunning = 0;
  const handler = (m: BusMessage, context: MessageContext): Promise<boolean> => {
    const id = `${m.partition}:${m.offset}`;
    started.push(id);
    contexts.set(id, context);
    running += 1;
    maxRunning = Math.max(maxRunning, running);
    return new Promise<boolean>((resolve) => {
      finishers.set(id, (finished) => {
        running -= 1;
        resolve(finished);
      });
    });
  };
  return {
    handler,
    started,
    contexts,
    maxRunning: () => maxRunning,
    finish: async (id: string, finished = true) => {
      const f = finishers.get(id);
      if (!f) throw new Error(`${id} is not running (started: ${started.join(', ')})`);
      finishers.delete(id);
      f(finished);
      await settle();
    },
  };
}

/** A sink that records commits and throttle changes. */
function recordingSink() {
  const commits: string[] = [];
  const throttles: boolean[] = [];
  const sink: LaneSink = {
    commit: (position) => {
      commits.push(position);
      return Promise.resolve();
    },
    throttle: (paused) => void throttles.push(paused),
  };
  return { sink, commits, throttles };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

function lanes(
  handler: (m: BusMessage, c: MessageContext) => Promise<boolean>,
  over: Partial<ConstructorParameters<typeof KeyedLanes>[1]> = {},
) {
  return new KeyedLanes(handler, {
    maxConcurrency: 8,
    maxBuffered: 100,
    commitIntervalMs: 0,
    groupId: 'g',
    logger: silent,
    heartbeat: () => Promise.resolve(),
    ...over,
  });
}

/** A controlled handler, lanes over it (with `over` options) and a recording sink. */
function setup(over: Parameters<typeof lanes>[1] = {}) {
  const h = controlled();
  return { h, l: lanes(h.handler, over), ...recordingSink() };
}

describe('KeyedLanes', () => {
  it('runs a later delivery of another key while a slow message runs, and the same key only after it', async () => {
    const { h, l, sink } = setup();
    l.deliver(TP, [message(0, 'slow')], sink);
    await settle();
    // A second fetch: the same key again, another key on the same partition, and another partition.
    l.deliver(TP, [message(1, 'slow'), message(2, 'other')], sink);
    l.deliver(TP2, [message(0, 'far', TP2)], sink);
    await settle();
    expect(h.started).toEqual(['0:0', '0:2', '1:0']);
    await h.finish('0:0');
    expect(h.started).toEqual(['0:0', '0:2', '1:0', '0:1']);
  });

  it('keeps the committed position at the lowest unfinished message', async () => {
    const { h, l, sink, commits } = setup();
    l.deliver(TP, [message(10, 'a'), message(11, 'b'), message(12, 'c')], sink);
    await settle();
    await h.finish('0:11');
    await h.finish('0:12');
    expect(commits).toEqual([]); // 10 still runs: nothing past it may be committed
    await h.finish('0:10');
    await settle();
    expect(commits.at(-1)).toBe('13');
  });

  it('never runs more than maxConcurrency messages across partitions, serving partitions in turn', async () => {
    const { h, l, sink } = setup({ maxConcurrency: 2 });
    l.hold();
    l.deliver(TP, [message(0, 'a'), message(1, 'b'), message(2, 'c')], sink);
    l.deliver(TP2, [message(0, 'x', TP2), message(1, 'y', TP2)], sink);
    await l.assign([TP, TP2], false);
    await settle();
    expect(h.started).toEqual(['0:0', '1:0']);
    for (let i = 0; i < 5; i += 1) await h.finish(h.started[i]!);
    expect(h.started).toHaveLength(5);
    expect(h.maxRunning()).toBe(2);
  });

  it('ignores messages it already holds when a partition is fetched again', async () => {
    const { h, l, sink, commits } = setup();
    l.deliver(TP, [message(0, 'a'), message(1, 'b')], sink);
    await settle();
    l.deliver(TP, [message(0, 'a'), message(1, 'b'), message(2, 'c')], sink);
    await settle();
    expect(h.started).toEqual(['0:0', '0:1', '0:2']);
    for (const id of ['0:0', '0:1', '0:2']) await h.finish(id);
    await settle();
    expect(commits.at(-1)).toBe('3');
  });

  it('asks to stop fetching at maxBuffered and to go on below half of it', async () => {
    const { h, l, sink, throttles } = setup({ maxBuffered: 4 });
    l.deliver(
      TP,
      [0, 1, 2, 3].map((o) => message(o, `k${o}`)),
      sink,
    );
    await settle();
    expect(throttles).toEqual([true]);
    await h.finish('0:0');
    expect(throttles).toEqual([true]); // 3 left: not below half
    await h.finish('0:1');
    await h.finish('0:2');
    expect(throttles).toEqual([true, false]);
  });

  it('while held starts nothing; on assignment drops what a lost partition waits for and its commits', async () => {
    const h = controlled();
    const l = lanes(h.handler, { maxConcurrency: 2 });
    const lost = recordingSink();
    const kept = recordingSink();
    l.deliver(TP, [message(0, 'a'), message(1, 'b')], lost.sink);
    l.deliver(TP2, [message(0, 'x', TP2), message(1, 'x', TP2)], kept.sink);
    await settle();
    expect(h.started).toEqual(['0:0', '0:1']);
    l.hold();
    await h.finish('0:0');
    await settle();
    expect(lost.commits).toEqual(['1']); // still the owner while the rebalance runs
    expect(h.started).toEqual(['0:0', '0:1']); // held: partition 1's first message waits
    const revoked = l.assign([TP2], false);
    await settle();
    expect(h.started).toEqual(['0:0', '0:1', '1:0']);
    await h.finish('0:1');
    await revoked;
    expect(lost.commits).toEqual(['1']); // lost: another member may own partition 0 now
    await h.finish('1:0');
    await h.finish('1:1');
    await settle();
    expect(kept.commits.at(-1)).toBe('2');
  });

  it('aborts the signal of a running message whose partition was lost, and runs its key after it on regaining', async () => {
    const { h, l, sink } = setup();
    l.deliver(TP, [message(5, 'k')], sink);
    await settle();
    const revoked = l.assign([], false);
    expect(h.contexts.get('0:5')!.signal.aborted).toBe(true);
    // Regained while the old message still runs: the redelivered key waits for it.
    l.deliver(TP, [message(5, 'k'), message(6, 'k')], sink);
    await settle();
    expect(h.started).toEqual(['0:5']);
    await h.finish('0:5', false);
    await revoked;
    expect(h.started).toEqual(['0:5', '0:5']);
  });

  it('leaves a message that returned false unfinished, and counts a thrown one as finished', async () => {
    const l = lanes((m) => (m.offset === '0' ? Promise.resolve(false) : Promise.reject(new Error('boom'))));
    const { sink, commits } = recordingSink();
    l.deliver(TP, [message(1, 'b')], sink);
    await settle();
    expect(commits.at(-1)).toBe('2');
    const l2 = lanes((m) => Promise.resolve(m.offset !== '0'));
    const r2 = recordingSink();
    l2.deliver(TP, [message(0, 'a'), message(1, 'b')], r2.sink);
    await settle();
    await l2.stop();
    expect(r2.commits).toEqual([]); // 0 is unfinished: the position stays at 0
  });

  it('starts nothing while mayStart says no, and starts on wake once it says yes', async () => {
    const h = controlled();
    let fresh = false;
    const l = lanes(h.handler, { mayStart: () => fresh });
    const { sink } = recordingSink();
    l.deliver(TP, [message(0, 'a')], sink);
    await settle();
    expect(h.started).toEqual([]);
    fresh = true;
    l.wake();
    await settle();
    expect(h.started).toEqual(['0:0']);
  });

  it('stop aborts running messages, waits for them and commits their finished prefix', async () => {
    const { h, l, sink, commits } = setup();
    l.deliver(TP, [message(0, 'a'), message(1, 'a')], sink);
    await settle();
    let stopped = false;
    const stopping = l.stop().then(() => (stopped = true));
    expect(h.contexts.get('0:0')!.signal.aborted).toBe(true);
    await settle();
    expect(stopped).toBe(false);
    await h.finish('0:0');
    await stopping;
    expect(commits.at(-1)).toBe('1');
    expect(h.started).toEqual(['0:0']); // the waiting message of the key was dropped
  });
});

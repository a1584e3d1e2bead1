import { describe, expect, it } from 'vitest';
import { coalescingPublisher } from '../../../libs/bus/coalescing-publisher.js';
import type { EventPublisher, OutgoingMessage } from '../../../libs/ports/event-bus.js';

/** An inner publisher that records each request and settles it only when the test says so (`answer`). */
function recordingInner() {
  const requests: Array<{
    topic: string;
    keys: string[];
    settle: (error?: Error) => void;
  }> = [];
  const inner: EventPublisher = {
    publish(topic, messages) {
      return new Promise<void>((resolve, reject) => {
        requests.push({
          topic,
          keys: messages.map((m) => m.key),
          settle: (error) => (error === undefined ? resolve() : reject(error)),
        });
      });
    },
  };
  /** Settles request `index` (failing it with `error`, if given) and lets the publisher react. */
  const answer = async (index: number, error?: Error): Promise<void> => {
    requests[index]!.settle(error);
    await tick();
  };
  return { inner, requests, answer };
}

const msg = (key: string, bytes = 10): OutgoingMessage => ({ key, value: Buffer.alloc(bytes, 1) });
/** Lets promise callbacks and the publisher's next `setImmediate` flush run. */
const tick = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
};
/** Follows a publish from the moment it is made (so a rejection is never unhandled). */
function track(p: Promise<void>): { readonly state: string; readonly done: Promise<void> } {
  const t = { state: 'pending', done: Promise.resolve() };
  t.done = p.then(
    () => void (t.state = 'resolved'),
    (e: Error) => void (t.state = `rejected: ${e.message}`),
  );
  return t;
}

/**
 * A coalescing publisher (with `options`) over a recording inner one, with a first publish (key
 * `x`) to `topic` already sent as request 0 and still in flight.
 */
async function withOneInFlight(topic: string, options?: Parameters<typeof coalescingPublisher>[1]) {
  const recording = recordingInner();
  const pub = coalescingPublisher(recording.inner, options);
  track(pub.publish(topic, [msg('x')]));
  await tick();
  return { pub, ...recording };
}

describe('coalescingPublisher', () => {
  it('sends an idle publish alone, then what arrived for its topic meanwhile as one request; topics never wait for each other', async () => {
    const { inner, requests, answer } = recordingInner();
    const pub = coalescingPublisher(inner);
    const first = track(pub.publish('results', [msg('a')]));
    await tick();
    expect(requests.map((r) => r.keys)).toEqual([['a']]);

    const waiting = [
      track(pub.publish('audit', [msg('b1'), msg('b2')])),
      track(pub.publish('results', [msg('c')])),
      track(pub.publish('audit', [msg('d')])),
      track(pub.publish('results', [msg('e')])),
    ];
    await tick();
    // The audit topic had nothing in flight: what arrived for it in one turn goes out at once.
    expect(requests.slice(1).map((r) => [r.topic, r.keys])).toEqual([['audit', ['b1', 'b2', 'd']]]);
    expect(waiting[1]!.state).toBe('pending');

    await answer(0);
    expect(first.state).toBe('resolved');
    expect(requests.slice(2).map((r) => [r.topic, r.keys])).toEqual([['results', ['c', 'e']]]);
    // Each publish resolves with the request that carried it, not before.
    await answer(1);
    expect(waiting.map((w) => w.state)).toEqual(['resolved', 'pending', 'resolved', 'pending']);
    await answer(2);
    expect(waiting.map((w) => w.state)).toEqual(Array(4).fill('resolved'));
  });

  it('never has two requests of one topic in flight, under many publishers', async () => {
    const { inner, requests } = recordingInner();
    const pub = coalescingPublisher(inner);
    const sent: string[] = [];
    const all: Array<{ readonly state: string; readonly done: Promise<void> }> = [];
    let settled = 0;
    for (let i = 0; i < 300; i += 1) {
      const topic = ['results', 'audit', 'dlq'][i % 3]!;
      if (topic === 'audit') sent.push(`k${i}`);
      all.push(track(pub.publish(topic, [msg(`k${i}`)])));
      if (i % 7 === 0) {
        await tick();
        const open = requests.slice(settled);
        const perTopic = new Map<string, number>();
        for (const r of open) perTopic.set(r.topic, (perTopic.get(r.topic) ?? 0) + 1);
        expect(Math.max(...perTopic.values())).toBe(1);
        for (const r of open) r.settle();
        settled = requests.length;
      }
    }
    for (let round = 0; round < 20; round += 1) {
      await tick();
      for (const r of requests.slice(settled)) r.settle();
      settled = requests.length;
    }
    await Promise.all(all.map((t) => t.done));
    expect(all.every((t) => t.state === 'resolved')).toBe(true);
    expect(requests.filter((r) => r.topic === 'audit').flatMap((r) => r.keys)).toEqual(sent);
  });

  it('rejects every publish of a failed request; the next flush goes out as usual', async () => {
    const { pub, requests, answer } = await withOneInFlight('results');
    const a = track(pub.publish('results', [msg('a')]));
    const b = track(pub.publish('results', [msg('b')]));
    await answer(0);
    await answer(1, new Error('broker unreachable'));
    expect([a.state, b.state]).toEqual(['rejected: broker unreachable', 'rejected: broker unreachable']);

    const again = track(pub.publish('results', [msg('a')]));
    await tick();
    expect(requests[2]!.keys).toEqual(['a']);
    await answer(2);
    expect(again.state).toBe('resolved');
  });

  it('re-sends a flush refused with a RangeError one publish at a time, failing only the bad one', async () => {
    const { pub, requests, answer } = await withOneInFlight('results');
    const good = track(pub.publish('results', [msg('good')]));
    const bad = track(pub.publish('results', [{ ...msg('bad'), partition: 99 }]));
    await answer(0);
    expect(requests[1]!.keys).toEqual(['good', 'bad']);
    await answer(1, new RangeError('topic results has no partition 99'));
    // One at a time: the topic still has one request in flight.
    expect(requests.slice(2).map((r) => r.keys)).toEqual([['good']]);
    await answer(2);
    expect(requests.slice(3).map((r) => r.keys)).toEqual([['bad']]);
    await answer(3, new RangeError('topic results has no partition 99'));
    expect(good.state).toBe('resolved');
    expect(bad.state).toBe('rejected: topic results has no partition 99');
  });

  it('splits a flush at the byte cap, keeping arrival order across the parts', async () => {
    const { pub, requests, answer } = await withOneInFlight('audit', { maxBatchBytes: 100 });
    const rest = ['a', 'b', 'c', 'd', 'e'].map((k) => track(pub.publish('audit', [msg(k, 39)])));
    await answer(0);
    expect(requests.slice(1).map((r) => r.keys)).toEqual([['a', 'b']]);
    await answer(1);
    expect(requests.slice(2).map((r) => r.keys)).toEqual([['c', 'd']]);
    await answer(2);
    expect(requests.slice(3).map((r) => r.keys)).toEqual([['e']]);
    await answer(3);
    expect(rest.map((w) => w.state)).toEqual(Array(5).fill('resolved'));
  });

  it('refuses invalid input at once without holding up anyone else', async () => {
    const { inner, requests } = recordingInner();
    const pub = coalescingPublisher(inner);
    await expect(pub.publish('', [msg('a')])).rejects.toThrow();
    await expect(
      pub.publish('results', [{ key: 'k', value: 'text' as unknown as Buffer }]),
    ).rejects.toThrow();
    await expect(pub.publish('results', [])).resolves.toBeUndefined();
    expect(requests).toHaveLength(0);
  });
});

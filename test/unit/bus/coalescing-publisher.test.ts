import { describe, expect, it } from 'vitest';
import { coalescingPublisher } from '../../../libs/bus/coalescing-publisher.js';
import type { EventPublisher, OutgoingMessage } from '../../../libs/ports/event-bus.js';

/** An inner publisher that records each request and settles it only when the test says so. */
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
  return { inner, requests };
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

describe('coalescingPublisher', () => {
  it('sends an idle publish alone, then what arrived meanwhile as one request per topic', async () => {
    const { inner, requests } = recordingInner();
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
    expect(requests).toHaveLength(1);
    expect(waiting[0]!.state).toBe('pending');

    requests[0]!.settle();
    await tick();
    expect(first.state).toBe('resolved');
    expect(requests.slice(1).map((r) => [r.topic, r.keys])).toEqual([
      ['audit', ['b1', 'b2', 'd']],
      ['results', ['c', 'e']],
    ]);
    // Each publish resolves with the request that carried it, not before.
    requests[1]!.settle();
    await tick();
    expect(waiting.map((w) => w.state)).toEqual(['resolved', 'pending', 'resolved', 'pending']);
    requests[2]!.settle();
    await tick();
    expect(waiting.map((w) => w.state)).toEqual(Array(4).fill('resolved'));
  });

  it('rejects every publish of a failed request; the next flush goes out as usual', async () => {
    const { inner, requests } = recordingInner();
    const pub = coalescingPublisher(inner);
    track(pub.publish('results', [msg('x')]));
    await tick();
    const a = track(pub.publish('results', [msg('a')]));
    const b = track(pub.publish('results', [msg('b')]));
    requests[0]!.settle();
    await tick();
    requests[1]!.settle(new Error('broker unreachable'));
    await tick();
    expect([a.state, b.state]).toEqual(['rejected: broker unreachable', 'rejected: broker unreachable']);

    const again = track(pub.publish('results', [msg('a')]));
    await tick();
    expect(requests[2]!.keys).toEqual(['a']);
    requests[2]!.settle();
    await tick();
    expect(again.state).toBe('resolved');
  });

  it('re-sends a flush refused with a RangeError one publish at a time, failing only the bad one', async () => {
    const { inner, requests } = recordingInner();
    const pub = coalescingPublisher(inner);
    track(pub.publish('results', [msg('x')]));
    await tick();
    const good = track(pub.publish('results', [msg('good')]));
    const bad = track(pub.publish('results', [{ ...msg('bad'), partition: 99 }]));
    requests[0]!.settle();
    await tick();
    expect(requests[1]!.keys).toEqual(['good', 'bad']);
    requests[1]!.settle(new RangeError('topic results has no partition 99'));
    await tick();
    expect(requests.slice(2).map((r) => r.keys)).toEqual([['good'], ['bad']]);
    requests[2]!.settle();
    requests[3]!.settle(new RangeError('topic results has no partition 99'));
    await tick();
    expect(good.state).toBe('resolved');
    expect(bad.state).toBe('rejected: topic results has no partition 99');
  });

  it('splits a flush at the byte cap, keeping arrival order across the parts', async () => {
    const { inner, requests } = recordingInner();
    const pub = coalescingPublisher(inner, { maxBatchBytes: 100 });
    track(pub.publish('audit', [msg('x')]));
    await tick();
    const rest = ['a', 'b', 'c', 'd', 'e'].map((k) => track(pub.publish('audit', [msg(k, 39)])));
    requests[0]!.settle();
    await tick();
    expect(requests.slice(1).map((r) => r.keys)).toEqual([['a', 'b']]);
    requests[1]!.settle();
    await tick();
    expect(requests.slice(2).map((r) => r.keys)).toEqual([['c', 'd']]);
    requests[2]!.settle();
    await tick();
    expect(requests.slice(3).map((r) => r.keys)).toEqual([['e']]);
    requests[3]!.settle();
    await tick();
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

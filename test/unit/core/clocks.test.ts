import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { systemClock } from '../../../libs/core/system-clock.js';

describe('ManualClock', () => {
  it('only moves on advance', async () => {
    const clock = new ManualClock(1_000);
    expect(clock.now()).toBe(1_000);
    await clock.advance(250);
    expect(clock.now()).toBe(1_250);
  });

  it('wakes due sleepers in due order (ties in call order) with now() at each due time', async () => {
    const clock = new ManualClock(0);
    const woke: string[] = [];
    const track = (label: string, ms: number): Promise<void> =>
      clock.sleep(ms).then(() => {
        woke.push(`${label}@${clock.now()}`);
      });
    const all = Promise.all([
      track('c', 30),
      track('a', 10),
      track('b', 20),
      track('a2', 10),
      track('late', 100),
    ]);
    await clock.advance(25);
    expect(woke).toEqual(['a@10', 'a2@10', 'b@20']);
    expect(clock.now()).toBe(25);
    expect(clock.pendingSleepers).toBe(2);
    await clock.advance(100);
    await all;
    expect(woke).toEqual(['a@10', 'a2@10', 'b@20', 'c@30', 'late@100']);
  });

  it('wakes a loop that sleeps again inside the advanced window', async () => {
    const clock = new ManualClock(0);
    const ticks: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 5; i++) {
        await clock.sleep(10);
        ticks.push(clock.now());
      }
    })();
    await clock.advance(35);
    expect(ticks).toEqual([10, 20, 30]);
    await clock.advance(100);
    await loop;
    expect(ticks).toEqual([10, 20, 30, 40, 50]);
  });

  it('resolves non-positive sleeps without an advance', async () => {
    const clock = new ManualClock(0);
    await clock.sleep(0);
    await clock.sleep(-5);
    await clock.sleep(NaN);
    expect(clock.pendingSleepers).toBe(0);
  });

  it('rejects with the abort reason and forgets the sleeper', async () => {
    const clock = new ManualClock(0);
    const ac = new AbortController();
    const reason = new Error('deadline');
    const sleeping = clock.sleep(1_000, ac.signal);
    expect(clock.pendingSleepers).toBe(1);
    ac.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
    expect(clock.pendingSleepers).toBe(0);
    const pre = new AbortController();
    pre.abort(reason);
    await expect(clock.sleep(10, pre.signal)).rejects.toBe(reason);
  });

  it('refuses to move backwards', async () => {
    await expect(new ManualClock().advance(-1)).rejects.toThrow(RangeError);
  });
});

describe('systemClock', () => {
  it('reads wall time and sleeps', async () => {
    const before = Date.now();
    await systemClock.sleep(1);
    expect(systemClock.now()).toBeGreaterThanOrEqual(before);
  });

  it('rejects with the abort reason, before or during the sleep, and detaches its listener', async () => {
    const reason = new Error('stop');
    const pre = new AbortController();
    pre.abort(reason);
    await expect(systemClock.sleep(60_000, pre.signal)).rejects.toBe(reason);
    const during = new AbortController();
    const sleeping = systemClock.sleep(60_000, during.signal);
    during.abort(reason);
    await expect(sleeping).rejects.toBe(reason);

    // Many completed sleeps on one long-lived signal must not pile up abort listeners.
    const shared = new AbortController();
    let listeners = 0;
    const add = shared.signal.addEventListener.bind(shared.signal);
    const remove = shared.signal.removeEventListener.bind(shared.signal);
    shared.signal.addEventListener = (...a: Parameters<typeof add>) => {
      listeners++;
      add(...a);
    };
    shared.signal.removeEventListener = (...a: Parameters<typeof remove>) => {
      listeners--;
      remove(...a);
    };
    for (let i = 0; i < 5; i++) await systemClock.sleep(0, shared.signal);
    expect(listeners).toBe(0);
  });
});

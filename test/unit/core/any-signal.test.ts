import { describe, expect, it } from 'vitest';
import { anySignal } from '../../../libs/core/any-signal.js';

describe('anySignal', () => {
  it('aborts with the reason of the first source that aborts', () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = anySignal([a.signal, b.signal]);
    expect(linked.signal.aborted).toBe(false);
    b.abort(new Error('stale'));
    a.abort(new Error('killed'));
    expect(linked.signal.aborted).toBe(true);
    expect((linked.signal.reason as Error).message).toBe('stale');
  });

  it('is aborted from the start when a source already is', () => {
    const a = new AbortController();
    a.abort('gone');
    const linked = anySignal([new AbortController().signal, a.signal]);
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe('gone');
    linked.dispose();
  });

  it('after dispose no longer follows its sources, and leaves no listener on them', () => {
    const long = new AbortController();
    let listeners = 0;
    const add = long.signal.addEventListener.bind(long.signal);
    const remove = long.signal.removeEventListener.bind(long.signal);
    long.signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
      listeners += 1;
      add(...args);
    };
    long.signal.removeEventListener = (...args: Parameters<AbortSignal['removeEventListener']>) => {
      listeners -= 1;
      remove(...args);
    };

    for (let i = 0; i < 100; i++) anySignal([new AbortController().signal, long.signal]).dispose();
    expect(listeners).toBe(0);

    const linked = anySignal([long.signal]);
    linked.dispose();
    linked.dispose();
    long.abort();
    expect(linked.signal.aborted).toBe(false);
  });
});

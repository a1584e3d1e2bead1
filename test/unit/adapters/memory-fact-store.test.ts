import { describe, expect, it } from 'vitest';
import { MemoryFactStore } from '../../../libs/adapters/memory/index.js';
import type { FactContribution } from '../../../libs/ports/fact-store.js';

const T0 = 1_700_000_000_000;
const WINDOW = 60_000;

const at = (key: string, callId: string, afterMs: number, windowMs = WINDOW): FactContribution => ({
  key,
  callId,
  units: 1,
  atMs: T0 + afterMs,
  windowMs,
});

describe('MemoryFactStore.purgeIdle', () => {
  it('drops contributions at least their series window old, and the series left empty', async () => {
    const store = new MemoryFactStore();
    await store.record([at('a', 'c1', 0), at('a', 'c2', 1_000), at('b', 'c1', 0, 2 * WINDOW)]);
    expect(store.purgeIdle(T0 + WINDOW - 1)).toBe(0);
    // `a` c1 is exactly one window old; `b` has a longer window.
    expect(store.purgeIdle(T0 + WINDOW)).toBe(1);
    expect(await store.sum([{ key: 'a', windowMs: 10 * WINDOW }], T0 + WINDOW)).toEqual([1]);
    expect(store.purgeIdle(T0 + 2 * WINDOW)).toBe(2);
    expect(
      await store.sum(
        [
          { key: 'a', windowMs: WINDOW },
          { key: 'b', windowMs: WINDOW },
        ],
        T0,
      ),
    ).toEqual([0, 0]);
    // A purged call recorded again counts again: nothing remembers it.
    await store.record([at('a', 'c1', 0)]);
    expect(await store.sum([{ key: 'a', windowMs: WINDOW }], T0)).toEqual([1]);
  });
});

import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { launchedByNpm, watchParent } from '../../../libs/runtime/parent-watch.js';

describe('watchParent', () => {
  it('reports once, within one interval, that the parent went away, and then stops reading', async () => {
    const clock = new ManualClock();
    let parent = 100;
    let reads = 0;
    let gone = 0;
    watchParent(() => gone++, {
      clock,
      intervalMs: 1_000,
      parentPid: () => {
        reads++;
        return parent;
      },
    });
    await clock.advance(5_000);
    expect(gone).toBe(0);
    parent = 1; // re-parented: the shell npm started this process through has died
    await clock.advance(1_000);
    expect(gone).toBe(1);
    const readsWhenGone = reads;
    await clock.advance(10_000);
    expect(gone).toBe(1);
    expect(reads).toBe(readsWhenGone);
    expect(clock.pendingSleepers).toBe(0);
  });

  it('leaves no timer behind once ended', async () => {
    const clock = new ManualClock();
    const end = watchParent(() => expect.fail('the parent never changed'), { clock, parentPid: () => 7 });
    await clock.advance(1_000);
    expect(clock.pendingSleepers).toBe(1);
    end();
    await clock.advance(0);
    expect(clock.pendingSleepers).toBe(0);
  });
});

describe('launchedByNpm', () => {
  it('is true under npx / npm exec / npm run, false otherwise', () => {
    expect(launchedByNpm({ npm_command: 'exec' })).toBe(true);
    expect(launchedByNpm({ npm_command: 'run-script' })).toBe(true);
    expect(launchedByNpm({})).toBe(false);
  });
});

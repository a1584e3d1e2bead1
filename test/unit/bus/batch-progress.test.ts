import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatchProgress, type ProgressSink } from '../../../libs/bus/batch-progress.js';
import { OffsetTracker } from '../../../libs/bus/offset-tracker.js';

function recordingSink(commitImpl?: (position: string) => Promise<void>) {
  const advances: Array<[string, string]> = [];
  const commits: string[] = [];
  const sink: ProgressSink = {
    advance: (position, lastFinished) => advances.push([position, lastFinished]),
    commit: async (position) => {
      commits.push(position);
      if (commitImpl) await commitImpl(position);
    },
  };
  return { sink, advances, commits };
}

describe('BatchProgress', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('moves the read position on every prefix advance and throttles commits to the interval', async () => {
    const { sink, advances, commits } = recordingSink();
    const errors: unknown[] = [];
    const progress = new BatchProgress(new OffsetTracker(['0', '1', '2', '3']), sink, {
      commitIntervalMs: 100,
      onCommitError: (e) => errors.push(e),
    });
    progress.markDone('1');
    expect(advances).toEqual([]); // 0 still running: nothing may move
    progress.markDone('0');
    expect(advances).toEqual([['2', '1']]);
    expect(commits).toEqual([]);
    await vi.advanceTimersByTimeAsync(100);
    expect(commits).toEqual(['2']);
    progress.markDone('2');
    await vi.advanceTimersByTimeAsync(99);
    expect(commits).toEqual(['2']);
    await vi.advanceTimersByTimeAsync(1);
    expect(commits).toEqual(['2', '3']);
    await progress.close();
    expect(commits).toEqual(['2', '3']); // nothing new to commit
    expect(progress.hasProgressed()).toBe(true);
    expect(errors).toEqual([]);
  });

  it('commits the final prefix on close and ignores marks afterwards', async () => {
    const { sink, commits } = recordingSink();
    const progress = new BatchProgress(new OffsetTracker(['5', '6', '7']), sink, {
      commitIntervalMs: 10_000,
      onCommitError: () => undefined,
    });
    progress.markDone('5');
    progress.markDone('7');
    await progress.close();
    expect(commits).toEqual(['6']);
    progress.markDone('6');
    await vi.advanceTimersByTimeAsync(20_000);
    expect(commits).toEqual(['6']);
    expect(progress.position()).toBe('6');
  });

  it('sends nothing when no prefix was finished', async () => {
    const { sink, commits } = recordingSink();
    const progress = new BatchProgress(new OffsetTracker(['5', '6']), sink, {
      commitIntervalMs: 1,
      onCommitError: () => undefined,
    });
    progress.markDone('6');
    await progress.close();
    expect(commits).toEqual([]);
    expect(progress.hasProgressed()).toBe(false);
  });

  it('serializes commits so a later position is never overwritten by an earlier one', async () => {
    const landed: string[] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((r) => (releaseFirst = r));
    const { sink } = recordingSink(async (position) => {
      if (position === '1') await firstHeld;
      landed.push(position);
    });
    const progress = new BatchProgress(new OffsetTracker(['0', '1', '2']), sink, {
      commitIntervalMs: 10,
      onCommitError: () => undefined,
    });
    progress.markDone('0');
    await vi.advanceTimersByTimeAsync(10); // commit('1') starts and hangs
    progress.markDone('1');
    progress.markDone('2');
    const closing = progress.close();
    await vi.advanceTimersByTimeAsync(50);
    expect(landed).toEqual([]);
    releaseFirst();
    await closing;
    expect(landed).toEqual(['1', '3']);
  });

  it('reports a failed commit and lets the next one cover it', async () => {
    let fail = true;
    const { sink, commits } = recordingSink((position) =>
      fail ? Promise.reject(new Error(`refused ${position}`)) : Promise.resolve(),
    );
    const errors: Array<[string, string]> = [];
    const progress = new BatchProgress(new OffsetTracker(['0', '1']), sink, {
      commitIntervalMs: 10,
      onCommitError: (e, position) => errors.push([(e as Error).message, position]),
    });
    progress.markDone('0');
    await vi.advanceTimersByTimeAsync(10);
    fail = false;
    progress.markDone('1');
    await progress.close();
    expect(errors).toEqual([['refused 1', '1']]);
    expect(commits).toEqual(['1', '2']);
  });

  it('throws for an offset outside the batch', () => {
    const { sink } = recordingSink();
    const progress = new BatchProgress(new OffsetTracker(['0']), sink, {
      commitIntervalMs: 10,
      onCommitError: () => undefined,
    });
    expect(() => progress.markDone('9')).toThrow(RangeError);
  });
});

import { describe, expect, it } from 'vitest';
import {
  backoffCapMs,
  retryWithBackoff,
  waitUnlessAborted,
  type FailedAttempt,
} from '../../../libs/core/backoff.js';
import type { Clock } from '../../../libs/core/clock.js';

type Sleeper = Pick<Clock, 'sleep'>;

/** A sleeper that returns at once and records every wait it was asked for. */
function recordingSleeper(): Sleeper & { readonly slept: number[] } {
  const slept: number[] = [];
  return {
    slept,
    sleep: (ms) => {
      slept.push(ms);
      return Promise.resolve();
    },
  };
}

/** A step that fails `failures` times, then resolves with the attempt number; counts its calls. */
function flakyStep(failures: number): {
  readonly step: (attempt: number) => Promise<string>;
  calls: () => number;
} {
  let calls = 0;
  return {
    step: (attempt) => {
      calls += 1;
      return calls <= failures
        ? Promise.reject(new Error(`failure ${calls}`))
        : Promise.resolve(`ok@${attempt}`);
    },
    calls: () => calls,
  };
}

const backoff = { baseDelayMs: 100, maxDelayMs: 350 };

describe('backoffCapMs', () => {
  it('doubles from the base and stops at the maximum', () => {
    expect([1, 2, 3, 4, 50].map((retry) => backoffCapMs(backoff, retry))).toEqual([100, 200, 350, 350, 350]);
  });

  it('counts a retry below 1 or not finite as the first', () => {
    expect(
      [0, -3, Number.NaN, Number.POSITIVE_INFINITY].map((retry) => backoffCapMs(backoff, retry)),
    ).toEqual([100, 100, 100, 100]);
  });

  it('counts negative or non-finite numbers as 0', () => {
    expect(backoffCapMs({ baseDelayMs: Number.NaN, maxDelayMs: 100 }, 3)).toBe(0);
    expect(backoffCapMs({ baseDelayMs: 100, maxDelayMs: -1 }, 3)).toBe(0);
  });
});

describe('retryWithBackoff', () => {
  it('retries until the step succeeds, waiting the growing, capped delays in between', async () => {
    const clock = recordingSleeper();
    const flaky = flakyStep(4);
    const told: FailedAttempt[] = [];
    const value = await retryWithBackoff(flaky.step, { backoff, clock, onRetry: (f) => told.push(f) });
    expect(value).toBe('ok@5');
    expect(flaky.calls()).toBe(5);
    expect(clock.slept).toEqual([100, 200, 350, 350]);
    expect(told.map((f) => [f.retry, f.delayMs, (f.err as Error).message])).toEqual([
      [1, 100, 'failure 1'],
      [2, 200, 'failure 2'],
      [3, 350, 'failure 3'],
      [4, 350, 'failure 4'],
    ]);
  });

  it('runs a step that succeeds at once exactly once, without waiting', async () => {
    const clock = recordingSleeper();
    const flaky = flakyStep(0);
    await expect(retryWithBackoff(flaky.step, { backoff, clock })).resolves.toBe('ok@1');
    expect(flaky.calls()).toBe(1);
    expect(clock.slept).toEqual([]);
  });

  it('rejects with the last error once maxAttempts are used up', async () => {
    const clock = recordingSleeper();
    const flaky = flakyStep(10);
    await expect(retryWithBackoff(flaky.step, { backoff, clock, maxAttempts: 3 })).rejects.toThrow(
      'failure 3',
    );
    expect(flaky.calls()).toBe(3);
    expect(clock.slept).toEqual([100, 200]);
  });

  it('throws a fatal error at once, without retrying or waiting', async () => {
    const clock = recordingSleeper();
    const flaky = flakyStep(10);
    let retries = 0;
    await expect(
      retryWithBackoff(flaky.step, { backoff, clock, isFatal: () => true, onRetry: () => void retries++ }),
    ).rejects.toThrow('failure 1');
    expect(flaky.calls()).toBe(1);
    expect(retries).toBe(0);
    expect(clock.slept).toEqual([]);
  });

  it('with a signal, resolves { value } on success', async () => {
    const flaky = flakyStep(1);
    const signal = new AbortController().signal;
    await expect(
      retryWithBackoff(flaky.step, { backoff, clock: recordingSleeper(), signal }),
    ).resolves.toEqual({
      value: 'ok@2',
    });
  });

  it('starts no attempt once the signal aborted', async () => {
    const flaky = flakyStep(0);
    const outcome = await retryWithBackoff(flaky.step, {
      backoff,
      clock: recordingSleeper(),
      signal: AbortSignal.abort(),
    });
    expect(outcome).toBeUndefined();
    expect(flaky.calls()).toBe(0);
  });

  it('resolves undefined when the signal aborts during a wait, and tries no more', async () => {
    const stop = new AbortController();
    const clock: Sleeper = {
      sleep: () => {
        stop.abort();
        return Promise.reject(new Error('aborted'));
      },
    };
    const flaky = flakyStep(10);
    const outcome = await retryWithBackoff(flaky.step, { backoff, clock, signal: stop.signal });
    expect(outcome).toBeUndefined();
    expect(flaky.calls()).toBe(1);
  });

  it('with full jitter, draws each wait uniformly up to its cap', async () => {
    const clock = recordingSleeper();
    const draws = [0, 0.5, 0.999_999];
    const flaky = flakyStep(3);
    await retryWithBackoff(flaky.step, { backoff, clock, jitter: 'full', random: () => draws.shift()! });
    expect(clock.slept).toEqual([0, 100, 350]);
  });
});

describe('waitUnlessAborted', () => {
  it('does not sleep on an aborted signal', async () => {
    const clock = recordingSleeper();
    await expect(waitUnlessAborted(clock, 100, AbortSignal.abort())).resolves.toBe(false);
    expect(clock.slept).toEqual([]);
  });

  it('resolves true after the full wait', async () => {
    const clock = recordingSleeper();
    await expect(waitUnlessAborted(clock, 100, new AbortController().signal)).resolves.toBe(true);
    expect(clock.slept).toEqual([100]);
  });
});

import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../libs/core/clock.js';
import { retryStartupStep } from '../../../libs/runtime/clients.js';
import { silentLogger } from '../../../libs/ports/logger.js';

function instantClock(slept: number[]): Clock {
  return {
    now: () => 0,
    sleep: (ms) => {
      slept.push(ms);
      return Promise.resolve();
    },
  };
}

describe('retryStartupStep', () => {
  it('retries a failing step with growing delays until it succeeds', async () => {
    const slept: number[] = [];
    let calls = 0;
    const value = await retryStartupStep(
      'ensure topics',
      () =>
        ++calls < 3
          ? Promise.reject(new Error('This server does not host this topic-partition'))
          : Promise.resolve('ok'),
      { clock: instantClock(slept), logger: silentLogger },
    );
    expect(value).toBe('ok');
    expect(calls).toBe(3);
    expect(slept).toEqual([250, 500]);
  });

  it('gives up with the last error after its attempts', async () => {
    const slept: number[] = [];
    let calls = 0;
    await expect(
      retryStartupStep('register schemas', () => Promise.reject(new Error(`refused ${++calls}`)), {
        clock: instantClock(slept),
        logger: silentLogger,
      }),
    ).rejects.toThrow('refused 6');
    expect(slept).toEqual([250, 500, 1000, 2000, 4000]);
  });
});

import { describe, expect, it } from 'vitest';
import { readinessChecks } from '../../../libs/observability/readiness.js';

describe('readinessChecks', () => {
  it('is ready only when every check answers true, and names why each other one is not', async () => {
    const ready = readinessChecks({ lifecycle: () => true, redis: async () => true });
    expect(await ready()).toEqual({ ready: true, checks: { lifecycle: true, redis: true } });

    const failing = readinessChecks(
      {
        lifecycle: () => 'stopping',
        store: async () => false,
        broker: () => Promise.reject(new Error('connect ECONNREFUSED')),
        thrower: () => {
          throw new Error('boom');
        },
        fine: () => true,
      },
      1000,
    );
    expect(await failing()).toEqual({
      ready: false,
      checks: {
        lifecycle: 'stopping',
        store: false,
        broker: 'connect ECONNREFUSED',
        thrower: 'boom',
        fine: true,
      },
    });
  });

  it('a check that never answers counts as not ready after the timeout, without holding the others', async () => {
    const ready = readinessChecks(
      { hung: () => new Promise<boolean>(() => undefined), fine: () => true },
      20,
    );
    expect(await ready()).toEqual({ ready: false, checks: { hung: 'no answer within 20 ms', fine: true } });
  });
});

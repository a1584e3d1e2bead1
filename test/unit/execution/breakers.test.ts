import { afterEach, describe, expect, it, vi } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import { createCircuitBreakers, type ManagedCircuitBreakers } from '../../../libs/execution/breakers.js';

const serverError = () => Object.assign(new Error('HTTP 503'), { status: 503 });
const callerError = () => Object.assign(new Error('HTTP 404'), { status: 404 });

let breakers: ManagedCircuitBreakers | undefined;
afterEach(() => {
  breakers?.shutdown();
  vi.useRealTimers();
});

/** The breaker library's reset and rolling-window timers, and its clock: time only moves when the test says. */
const TIMERS = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] as const;

function make(resetTimeoutMs = 60_000): ManagedCircuitBreakers {
  breakers = createCircuitBreakers({
    errorThresholdPercentage: 50,
    volumeThreshold: 4,
    resetTimeoutMs,
    timeoutMs: false,
  });
  return breakers;
}

describe('circuit breakers', () => {
  it('after N server failures calls fail fast with BREAKER_OPEN and fn is not called', async () => {
    const b = make();
    let calls = 0;
    const failing = () => {
      calls += 1;
      return Promise.reject(serverError());
    };
    for (let i = 0; i < 4; i++)
      await expect(b.run('shipping', failing)).rejects.toMatchObject({ status: 503 });
    expect(b.state('shipping')).toBe('open');
    for (let i = 0; i < 10; i++) {
      const err: unknown = await b.run('shipping', failing).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ToolgateError);
      expect(err).toMatchObject({ code: 'BREAKER_OPEN', retryable: true });
      expect((err as ToolgateError).retryAfterMs).toBeGreaterThan(0);
    }
    expect(calls).toBe(4);
  });

  it('timeouts count against the downstream like server errors', async () => {
    const b = make();
    const timingOut = () => Promise.reject(new ToolgateError('TIMEOUT', 'no answer'));
    for (let i = 0; i < 4; i++) await b.run('slow', timingOut).catch(() => undefined);
    expect(b.state('slow')).toBe('open');
  });

  it('caller errors do not open it', async () => {
    const b = make();
    let calls = 0;
    for (let i = 0; i < 20; i++) {
      await expect(
        b.run('crm', () => {
          calls += 1;
          return Promise.reject(callerError());
        }),
      ).rejects.toMatchObject({ status: 404 });
    }
    expect(calls).toBe(20);
    expect(b.state('crm')).toBe('closed');
  });

  it('one breaker per downstream: another downstream is unaffected', async () => {
    const b = make();
    for (let i = 0; i < 4; i++) await b.run('a', () => Promise.reject(serverError())).catch(() => undefined);
    expect(b.state('a')).toBe('open');
    await expect(b.run('b', () => Promise.resolve('fine'))).resolves.toBe('fine');
    expect(b.state('b')).toBe('closed');
    expect(b.state('never-called')).toBe('closed');
    expect(Object.fromEntries(b.states())).toEqual({ a: 'open', b: 'closed' });
  });

  it('after the reset timeout a half-open probe that succeeds closes it', async () => {
    vi.useFakeTimers({ toFake: [...TIMERS] });
    const b = make(40);
    for (let i = 0; i < 4; i++)
      await b.run('pay', () => Promise.reject(serverError())).catch(() => undefined);
    expect(b.state('pay')).toBe('open');
    await vi.advanceTimersByTimeAsync(39);
    expect(b.state('pay')).toBe('open');
    await vi.advanceTimersByTimeAsync(1);
    expect(b.state('pay')).toBe('half-open');
    let probes = 0;
    await expect(
      b.run('pay', () => {
        probes += 1;
        return Promise.resolve('ok');
      }),
    ).resolves.toBe('ok');
    expect(probes).toBe(1);
    expect(b.state('pay')).toBe('closed');
  });

  it('a failing half-open probe opens it again', async () => {
    vi.useFakeTimers({ toFake: [...TIMERS] });
    const b = make(40);
    for (let i = 0; i < 4; i++)
      await b.run('pay', () => Promise.reject(serverError())).catch(() => undefined);
    await vi.advanceTimersByTimeAsync(40);
    expect(b.state('pay')).toBe('half-open');
    await b.run('pay', () => Promise.reject(serverError())).catch(() => undefined);
    expect(b.state('pay')).toBe('open');
    let calls = 0;
    await expect(b.run('pay', () => Promise.resolve((calls += 1)))).rejects.toMatchObject({
      code: 'BREAKER_OPEN',
    });
    expect(calls).toBe(0);
    // Its next probe comes a full reset timeout after the failed one.
    await vi.advanceTimersByTimeAsync(39);
    expect(b.state('pay')).toBe('open');
    await vi.advanceTimersByTimeAsync(1);
    expect(b.state('pay')).toBe('half-open');
  });

  it('after shutdown nothing runs', async () => {
    const b = make();
    b.shutdown();
    let calls = 0;
    await expect(b.run('x', () => Promise.resolve((calls += 1)))).rejects.toMatchObject({
      code: 'BREAKER_OPEN',
    });
    expect(calls).toBe(0);
  });
});

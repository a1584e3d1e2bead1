import { createServer } from 'node:net';
import fc from 'fast-check';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import CircuitBreaker from 'opossum';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { classify } from '../../../libs/core/classify.js';
import { ERROR_CODES, ToolgateError } from '../../../libs/core/errors.js';

const SECRET = 'sk-live-4f9a0c1e2b3d';
const THROWS = Symbol('throws');

function httpError(status: number, headers?: Record<string, string>): Error {
  return Object.assign(new Error(`HTTP ${status} token=${SECRET}`), { status, headers });
}

describe('classify — known shapes', () => {
  it('returns a ToolgateError unchanged (same instance)', () => {
    const original = new ToolgateError('POLICY_VIOLATION', 'refund above limit');
    expect(classify(original)).toBe(original);
  });

  it('maps an opened opossum breaker to BREAKER_OPEN', async () => {
    const breaker = new CircuitBreaker(() => Promise.resolve('ok'));
    breaker.open();
    const err: unknown = await breaker.fire().catch((e: unknown) => e);
    breaker.shutdown();
    const c = classify(err);
    expect(c.code).toBe('BREAKER_OPEN');
    expect(c.retryable).toBe(true);
    expect(c.cause).toBe(err);
  });

  it("maps opossum's own timeout to TIMEOUT", async () => {
    let release: () => void = () => undefined;
    const breaker = new CircuitBreaker(() => new Promise<void>((r) => (release = r)), { timeout: 5 });
    const err: unknown = await breaker.fire().catch((e: unknown) => e);
    release();
    breaker.shutdown();
    expect((err as { code: string }).code).toBe('ETIMEDOUT');
    expect(classify(err).code).toBe('TIMEOUT');
  });

  it('maps a ZodError to SCHEMA_INVALID without echoing the input', () => {
    const result = z.object({ amount: z.number() }).safeParse({ amount: SECRET });
    expect(result.success).toBe(false);
    const c = classify(result.error);
    expect(c.code).toBe('SCHEMA_INVALID');
    expect(c.message).not.toContain(SECRET);
  });

  it('maps a duck-typed ZodError from another zod copy to SCHEMA_INVALID', () => {
    const foreign = Object.assign(new Error('bad'), { name: 'ZodError', issues: [] });
    expect(classify(foreign).code).toBe('SCHEMA_INVALID');
  });

  it('maps AbortSignal.timeout and AbortController aborts to TIMEOUT', async () => {
    const signal = AbortSignal.timeout(1);
    await new Promise((r) => setTimeout(r, 5));
    expect(signal.aborted).toBe(true);
    expect(classify(signal.reason).code).toBe('TIMEOUT');
    const ac = new AbortController();
    ac.abort();
    expect(classify(ac.signal.reason).code).toBe('TIMEOUT');
  });

  it('maps a refused connection (real fetch) to SERVER_ERROR via the cause chain', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    await new Promise<void>((r) => server.close(() => r()));
    const err: unknown = await fetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    const c = classify(err);
    expect(c.code).toBe('SERVER_ERROR');
    expect(c.cause).toBe(err);
  });

  it('maps socket resets and read timeouts to TIMEOUT (outcome unknown)', () => {
    for (const code of ['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'UND_ERR_HEADERS_TIMEOUT']) {
      expect(classify(Object.assign(new Error('x'), { code })).code).toBe('TIMEOUT');
    }
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'UND_ERR_CONNECT_TIMEOUT']) {
      expect(classify(Object.assign(new Error('x'), { code })).code).toBe('SERVER_ERROR');
    }
  });

  it('maps HTTP statuses: 4xx caller, 401/403 not retryable, 5xx server, 504 timeout', () => {
    expect(classify(httpError(400))).toMatchObject({ code: 'CALLER_ERROR', retryable: true });
    expect(classify(httpError(404))).toMatchObject({ code: 'CALLER_ERROR', retryable: true });
    expect(classify(httpError(403))).toMatchObject({ code: 'CALLER_ERROR', retryable: false });
    expect(classify(httpError(401))).toMatchObject({ code: 'CALLER_ERROR', retryable: false });
    expect(classify(httpError(500))).toMatchObject({ code: 'SERVER_ERROR', retryable: true });
    expect(classify(httpError(503))).toMatchObject({ code: 'SERVER_ERROR' });
    expect(classify(httpError(504))).toMatchObject({ code: 'TIMEOUT' });
    expect(classify({ statusCode: 502 }).code).toBe('SERVER_ERROR');
    expect(classify({ response: { status: 422 } }).code).toBe('CALLER_ERROR');
    expect(classify({ status: 200 }).code).toBe('INTERNAL');
  });

  it('maps 429 to RATE_LIMITED and reads every retry-after form', () => {
    expect(classify(httpError(429, { 'Retry-After': '2' })).retryAfterMs).toBe(2000);
    expect(classify(httpError(429, { 'retry-after-ms': '150.2' })).retryAfterMs).toBe(151);
    expect(classify(Object.assign(httpError(429), { retryAfterMs: 700 })).retryAfterMs).toBe(700);
    const date = new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString();
    const nowMs = Date.UTC(2030, 0, 1, 0, 0, 0);
    expect(classify(httpError(429, { 'retry-after': date }), { nowMs }).retryAfterMs).toBe(30_000);
    // Without a clock the date form cannot become a delay; it is ignored rather than guessed.
    expect(classify(httpError(429, { 'retry-after': date })).retryAfterMs).toBeUndefined();
    expect(classify(httpError(429, { 'retry-after': '999999999' })).retryAfterMs).toBe(3_600_000);
    expect(classify(httpError(429, { 'retry-after': 'soon' }))).toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterMs: undefined,
    });
  });

  it('understands the OpenAI SDK error classes, including fetch Headers', () => {
    const limited = APIError.generate(
      429,
      { error: { message: SECRET } },
      SECRET,
      new Headers({ 'retry-after': '3' }),
    );
    expect(classify(limited)).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 3000 });
    expect(classify(APIError.generate(500, undefined, 'boom', new Headers())).code).toBe('SERVER_ERROR');
    expect(classify(new APIConnectionTimeoutError()).code).toBe('TIMEOUT');
    const refused = new APIConnectionError({
      cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
    });
    expect(classify(refused).code).toBe('SERVER_ERROR');
    // No recognizable cause: the request may have been sent, so the outcome is unknown.
    expect(classify(new APIConnectionError({})).code).toBe('TIMEOUT');
  });

  it('maps plain errors, strings and null to INTERNAL', () => {
    for (const value of [new TypeError('x is undefined'), 'boom', null, undefined, 42, Symbol('s'), {}]) {
      const c = classify(value);
      expect(c.code).toBe('INTERNAL');
      expect(c.retryable).toBe(false);
    }
  });

  it('never copies the thrown text into the message', () => {
    for (const err of [
      new Error(SECRET),
      httpError(400),
      httpError(502),
      { code: 'ECONNRESET', message: SECRET },
    ]) {
      expect(classify(err).message).not.toContain(SECRET);
      expect(classify(err).message).not.toContain('token=');
    }
  });
});

describe('classify — hostile input', () => {
  it('survives getters and toString that throw', () => {
    const hostile = {
      get name(): string {
        throw new Error('name');
      },
      get code(): string {
        throw new Error('code');
      },
      get status(): number {
        throw new Error('status');
      },
      get cause(): unknown {
        throw new Error('cause');
      },
      toString(): string {
        throw new Error('toString');
      },
    };
    expect(classify(hostile).code).toBe('INTERNAL');
  });

  it('survives proxies whose every trap throws, and revoked proxies', () => {
    const trap = (): never => {
      throw new Error('trap');
    };
    const angry = new Proxy({}, { get: trap, has: trap, getPrototypeOf: trap, ownKeys: trap });
    expect(classify(angry).code).toBe('INTERNAL');
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(classify(proxy).code).toBe('INTERNAL');
    expect(classify(Object.assign(new Error('x'), { cause: proxy })).code).toBe('INTERNAL');
  });

  it('terminates on cyclic cause chains and still finds a code in them', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = Object.assign(new Error('b'), { cause: a, code: 'ECONNREFUSED' });
    a.cause = b;
    expect(classify(a).code).toBe('SERVER_ERROR');
    const self = new Error('self') as Error & { cause?: unknown };
    self.cause = self;
    expect(classify(self).code).toBe('INTERNAL');
  });

  it('is total over arbitrary values (property)', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withBigInt: true,
          withBoxedValues: true,
          withDate: true,
          withMap: true,
          withSet: true,
          withNullPrototype: true,
          withObjectString: true,
          withSparseArray: true,
          withTypedArray: true,
        }),
        (value) => {
          const c = classify(value);
          expect(c).toBeInstanceOf(ToolgateError);
          expect(ERROR_CODES).toContain(c.code);
          expect(typeof c.message).toBe('string');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('is total over error-like objects with arbitrary and throwing fields (property)', () => {
    const field = fc.oneof(
      fc.anything(),
      fc.constantFrom('EOPENBREAKER', 'ECONNRESET', 'ECONNREFUSED', 'AbortError', 'ZodError'),
      fc.integer({ min: 100, max: 700 }),
      fc.constant(THROWS),
    );
    const keys = fc.constantFrom(
      'name',
      'code',
      'status',
      'statusCode',
      'cause',
      'headers',
      'response',
      'issues',
    );
    fc.assert(
      fc.property(fc.dictionary(keys, field), fc.string(), (spec, secret) => {
        const target: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(spec)) {
          if (value === THROWS) {
            Object.defineProperty(target, key, {
              enumerable: true,
              get: () => {
                throw new Error(secret);
              },
            });
          } else {
            target[key] = value;
          }
        }
        const c = classify(target);
        expect(c).toBeInstanceOf(ToolgateError);
        expect(c.cause).toBe(target);
      }),
      { numRuns: 500 },
    );
  });

  it('never echoes the error text (property)', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9a-f]{16}$/),
        fc.constantFrom(undefined, 400, 429, 500, 504),
        (secret, status) => {
          const err = Object.assign(new Error(`secret ${secret}`), {
            status,
            headers: { 'x-token': secret },
          });
          expect(classify(err).message).not.toContain(secret);
        },
      ),
    );
  });
});

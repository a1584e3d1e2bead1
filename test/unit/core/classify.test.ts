import { createServer } from 'node:net';
import fc from 'fast-check';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import CircuitBreaker from 'opossum';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { classify, MAX_CAUSE_DEPTH } from '../../../libs/core/classify.js';
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

describe('classify — every listed code, and nothing else', () => {
  const withCode = (code: string, extra: object = {}) => Object.assign(new Error('x'), { code }, extra);

  /** What classify concludes from a listed code, by what the code says of the request. */
  const VERDICTS = {
    'the breaker refused, BREAKER_OPEN': {
      code: 'BREAKER_OPEN',
      message: 'The downstream service is temporarily unavailable; the call was not attempted.',
    },
    'the request may have been applied, TIMEOUT': {
      code: 'TIMEOUT',
      message:
        'The downstream service did not answer in time. ' +
        'The request may or may not have been applied; its outcome is unknown.',
    },
    'never reached the downstream, SERVER_ERROR': {
      code: 'SERVER_ERROR',
      message: 'The downstream service failed. Changing the arguments will not help.',
    },
  };
  const breaker = 'the breaker refused, BREAKER_OPEN';
  const mayHaveApplied = 'the request may have been applied, TIMEOUT';
  const neverSent = 'never reached the downstream, SERVER_ERROR';

  it.each<[string, keyof typeof VERDICTS]>([
    ['EOPENBREAKER', breaker],
    ['ESEMLOCKED', breaker],
    ['ESHUTDOWN', breaker],
    ['ETIMEDOUT', mayHaveApplied],
    ['ESOCKETTIMEDOUT', mayHaveApplied],
    ['ECONNRESET', mayHaveApplied],
    ['ECONNABORTED', mayHaveApplied],
    ['EPIPE', mayHaveApplied],
    ['UND_ERR_HEADERS_TIMEOUT', mayHaveApplied],
    ['UND_ERR_BODY_TIMEOUT', mayHaveApplied],
    ['UND_ERR_SOCKET', mayHaveApplied],
    ['UND_ERR_ABORTED', mayHaveApplied],
    ['ABORT_ERR', mayHaveApplied],
    ['ECONNREFUSED', neverSent],
    ['ENOTFOUND', neverSent],
    ['EAI_AGAIN', neverSent],
    ['EHOSTUNREACH', neverSent],
    ['ENETUNREACH', neverSent],
    ['EHOSTDOWN', neverSent],
    ['ENETDOWN', neverSent],
    ['UND_ERR_CONNECT_TIMEOUT', neverSent],
    ['CERT_HAS_EXPIRED', neverSent],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', neverSent],
  ])('%s: %s', (code, verdict) => {
    expect(classify(withCode(code))).toMatchObject(VERDICTS[verdict]);
  });

  it('an unknown code is not evidence that the request never left: INTERNAL', () => {
    expect(classify(withCode('EWHATEVER'))).toMatchObject({ code: 'INTERNAL', retryable: false });
    expect(classify(withCode('ECONNREFUSED_LATER'))).toMatchObject({ code: 'INTERNAL' });
    // An unknown code does not hide what else the error says.
    expect(classify(withCode('EWHATEVER', { status: 502 })).code).toBe('SERVER_ERROR');
    expect(classify(withCode('EWHATEVER', { name: 'TimeoutError' })).code).toBe('TIMEOUT');
    expect(classify({ code: 42, status: 400 }).code).toBe('CALLER_ERROR');
  });

  it.each(['AbortError', 'TimeoutError', 'APIConnectionTimeoutError', 'APIUserAbortError'])(
    'the name %s, or a class of that name, means we stopped waiting: TIMEOUT',
    (name) => {
      expect(classify(Object.assign(new Error('x'), { name })).code).toBe('TIMEOUT');
      const byClass = { [name]: class extends Error {} }[name]!;
      expect(classify(new byClass('x')).code).toBe('TIMEOUT');
    },
  );

  it('a connection error with no recognizable cause anywhere in the chain is TIMEOUT', () => {
    const inner = Object.assign(new Error('x'), { name: 'APIConnectionError' });
    expect(classify(new Error('outer', { cause: inner })).code).toBe('TIMEOUT');
    expect(classify(Object.assign(new Error('x'), { name: 'SomethingElse' })).code).toBe('INTERNAL');
  });

  it('keeps the thrown value as the cause of the built error', () => {
    const thrown = withCode('EWHATEVER');
    expect(classify(thrown).cause).toBe(thrown);
    expect(classify(httpError(500)).message).toBe(
      'The downstream service failed. Changing the arguments will not help.',
    );
  });
});

describe('classify — the cause chain', () => {
  function nested(depth: number, innermost: object): Error {
    let err: Error = Object.assign(new Error('innermost'), innermost);
    for (let i = 0; i < depth; i++) err = new Error(`level ${i}`, { cause: err });
    return err;
  }

  it(`looks ${MAX_CAUSE_DEPTH} levels down the cause chain, and no further`, () => {
    expect(classify(nested(MAX_CAUSE_DEPTH, { code: 'ECONNREFUSED' })).code).toBe('SERVER_ERROR');
    expect(classify(nested(MAX_CAUSE_DEPTH + 1, { code: 'ECONNREFUSED' })).code).toBe('INTERNAL');
  });

  it('the outermost recognizable level decides', () => {
    const err = Object.assign(new Error('outer'), {
      code: 'ECONNRESET',
      cause: Object.assign(new Error('inner'), { code: 'ECONNREFUSED' }),
    });
    expect(classify(err).code).toBe('TIMEOUT');
  });

  it('a non-object cause ends the chain', () => {
    expect(classify(new Error('x', { cause: 'ECONNREFUSED' })).code).toBe('INTERNAL');
  });
});

describe('classify — HTTP statuses and their messages', () => {
  it('reads a status only in 400–599, as an integer, from status, statusCode or the response', () => {
    expect(classify({ status: 399 }).code).toBe('INTERNAL');
    expect(classify({ status: 400 }).code).toBe('CALLER_ERROR');
    expect(classify({ status: 599 }).code).toBe('SERVER_ERROR');
    expect(classify({ status: 600 }).code).toBe('INTERNAL');
    expect(classify({ status: 500.5 }).code).toBe('INTERNAL');
    expect(classify({ status: '500' }).code).toBe('INTERNAL');
    expect(classify({ statusCode: 503 }).code).toBe('SERVER_ERROR');
    expect(classify({ response: { status: 503 } }).code).toBe('SERVER_ERROR');
    expect(classify({ response: { statusCode: 504 } }).code).toBe('TIMEOUT');
    expect(classify({ status: 200, statusCode: 502 }).code).toBe('SERVER_ERROR');
  });

  it('499 is a caller error and 500 a server error', () => {
    expect(classify(httpError(499)).code).toBe('CALLER_ERROR');
    expect(classify(httpError(500)).code).toBe('SERVER_ERROR');
    expect(classify(httpError(505)).code).toBe('SERVER_ERROR');
  });

  it('gives each caller error its own sentence and fix', () => {
    const fix = 'Check the arguments against what the user asked for and retry with corrected values.';
    expect(classify(httpError(400))).toMatchObject({
      message: 'The downstream service rejected the request as invalid.',
      suggestedFix: fix,
    });
    expect(classify(httpError(404))).toMatchObject({
      message: 'The downstream service did not find what the arguments refer to.',
      suggestedFix: fix,
    });
    expect(classify(httpError(409))).toMatchObject({
      code: 'CALLER_ERROR',
      message: 'The downstream service reported a conflict with the current state of the resource.',
      suggestedFix: 'Read the current state of the resource before trying again.',
    });
    for (const status of [401, 403]) {
      const c = classify(httpError(status));
      expect(c).toMatchObject({ message: 'The downstream service refused this request.', retryable: false });
      expect(c.suggestedFix).toBeUndefined();
    }
    expect(classify(httpError(429)).message).toBe('The downstream service is rate limiting requests.');
    expect(classify(z.string().safeParse(1).error).message).toBe(
      "The arguments do not match the tool's schema.",
    );
    expect(classify(new Error('x')).message).toBe('An internal error occurred while handling the tool call.');
  });

  it('a server error or timeout carries no fix for the arguments', () => {
    expect(classify(httpError(500)).suggestedFix).toBeUndefined();
    expect(classify(httpError(504)).suggestedFix).toBeUndefined();
  });
});

describe('classify — retry-after', () => {
  const limited = (extra: object) => Object.assign(new Error('x'), { status: 429 }, extra);

  it('reads headers from the error or its response, plain or fetch Headers, any case', () => {
    expect(classify(limited({ headers: { 'RETRY-AFTER': '4' } })).retryAfterMs).toBe(4000);
    expect(classify(limited({ response: { headers: { 'retry-after': '5' } } })).retryAfterMs).toBe(5000);
    expect(classify(limited({ headers: new Headers({ 'Retry-After-Ms': '250' }) })).retryAfterMs).toBe(250);
    expect(classify(limited({ headers: { 'retry-after': ['6', '7'] } })).retryAfterMs).toBe(6000);
    expect(classify(limited({ headers: { 'retry-after': 6 } })).retryAfterMs).toBeUndefined();
  });

  it('prefers retry-after-ms, and falls back to retry-after when it is not a number', () => {
    const both = { 'retry-after-ms': '300', 'retry-after': '9' };
    expect(classify(limited({ headers: both })).retryAfterMs).toBe(300);
    const badMs = { 'retry-after-ms': 'soon', 'retry-after': '9' };
    expect(classify(limited({ headers: badMs })).retryAfterMs).toBe(9000);
    expect(classify(limited({ headers: { 'retry-after-ms': '1e3' } })).retryAfterMs).toBeUndefined();
    expect(classify(limited({ headers: { 'retry-after': ' 2.5 ' } })).retryAfterMs).toBe(2500);
    expect(classify(limited({ headers: { 'retry-after': '2x' } })).retryAfterMs).toBeUndefined();
  });

  it('clamps to 0 … 1 hour and rounds up; a date in the past waits 0', () => {
    const nowMs = Date.UTC(2030, 0, 1, 0, 0, 0);
    const past = new Date(nowMs - 60_000).toUTCString();
    expect(classify(limited({ headers: { 'retry-after': past } }), { nowMs }).retryAfterMs).toBe(0);
    expect(classify(limited({ retryAfterMs: -5 })).retryAfterMs).toBe(0);
    expect(classify(limited({ retryAfterMs: 0.2 })).retryAfterMs).toBe(1);
    expect(classify(limited({ retryAfterMs: 3_600_001 })).retryAfterMs).toBe(3_600_000);
    expect(classify(limited({ retryAfterMs: Number.NaN })).retryAfterMs).toBeUndefined();
    expect(
      classify(limited({ headers: { 'retry-after': 'not a date' } }), { nowMs }).retryAfterMs,
    ).toBeUndefined();
  });

  it('survives a headers object whose get or keys throw', () => {
    const throwingGet = {
      get: () => {
        throw new Error('get');
      },
    };
    expect(classify(limited({ headers: throwingGet }))).toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterMs: undefined,
    });
    const throwingKeys = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('keys');
        },
      },
    );
    expect(classify(limited({ headers: throwingKeys })).code).toBe('RATE_LIMITED');
  });
});

describe('classify — shapes that only look alike', () => {
  it('a ZodError needs both the name and the issues list', () => {
    expect(classify(Object.assign(new Error('x'), { issues: [], status: 500 })).code).toBe('SERVER_ERROR');
    expect(classify({ issues: [] }).code).toBe('INTERNAL');
    expect(classify(Object.assign(new Error('x'), { name: 'ZodError' })).code).toBe('INTERNAL');
  });

  it('retry-after-ms must be a whole plain number, or retry-after is read instead', () => {
    const limited = (headers: Record<string, string>) =>
      Object.assign(new Error('x'), { status: 429, headers });
    for (const bad of ['x5', '5x', '1e3', '']) {
      expect(classify(limited({ 'retry-after-ms': bad, 'retry-after': '9' })).retryAfterMs).toBe(9000);
    }
    expect(classify(limited({ 'retry-after-ms': '150.25' })).retryAfterMs).toBe(151);
    expect(classify(limited({ 'retry-after': '2.55' })).retryAfterMs).toBe(2550);
  });

  it('retry-after that is not a plain number is read as a date, even one ending in digits', () => {
    const nowMs = Date.UTC(2029, 11, 31, 23, 59, 0);
    const limited = Object.assign(new Error('x'), { status: 429, headers: { 'retry-after': '2030-01-01' } });
    expect(classify(limited, { nowMs }).retryAfterMs).toBe(60_000);
  });

  it('an unreadable retry-after on the error lets the response headers answer', () => {
    const date = new Date(Date.UTC(2030, 0, 1)).toUTCString();
    for (const first of ['soon', date]) {
      const err = Object.assign(new Error('x'), {
        status: 429,
        headers: { 'retry-after': first },
        response: { headers: { 'retry-after': '5' } },
      });
      // Without a clock a date cannot be read either.
      expect(classify(err).retryAfterMs).toBe(5000);
    }
    const unparsable = Object.assign(new Error('x'), {
      status: 429,
      headers: { 'retry-after': 'soon' },
      response: { headers: { 'retry-after': '5' } },
    });
    expect(classify(unparsable, { nowMs: 0 }).retryAfterMs).toBe(5000);
  });

  it('a headers object whose get answers something other than a string has no such header', () => {
    const err = Object.assign(new Error('x'), { status: 429, headers: { get: () => 5 } });
    expect(classify(err)).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: undefined });
  });
});

describe('classify — values that resist inspection are not trusted', () => {
  it('a headers object whose get throws has no headers, whatever keys it carries', () => {
    const headers = {
      get: () => {
        throw new Error('get');
      },
      'retry-after': '5',
    };
    const err = Object.assign(new Error('x'), { status: 429, headers });
    expect(classify(err)).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: undefined });
  });
});

describe('classify — the last line of defence', () => {
  it('a value whose inspection throws past every guard is still INTERNAL, with the fixed sentence', () => {
    const { proxy, revoke } = Proxy.revocable([], {});
    revoke();
    // Array.isArray throws for a revoked proxy: classify's own catch answers.
    const c = classify({ name: 'ZodError', issues: proxy });
    expect(c).toBeInstanceOf(ToolgateError);
    expect(c).toMatchObject({
      code: 'INTERNAL',
      message: 'An internal error occurred while handling the tool call.',
    });
  });

  it('a header value is a string, or the first string of a list; anything else is no header', () => {
    const limited = (value: unknown) =>
      classify(Object.assign(new Error('x'), { status: 429, headers: { 'retry-after': value } }));
    expect(limited(['6']).retryAfterMs).toBe(6000);
    expect(limited([6]).retryAfterMs).toBeUndefined();
    expect(limited({ 0: '7' }).retryAfterMs).toBeUndefined();
  });
});

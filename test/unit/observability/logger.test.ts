import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BusLogger } from '../../../libs/bus/logger.js';
import { busLogger } from '../../../libs/observability/bus-logger.js';
import {
  createLogger,
  redactArgumentsForLog,
  withLogContext,
  type LoggerOptions,
} from '../../../libs/observability/logger.js';
import { isSecretKey, scrubSecrets, scrubText } from '../../../libs/observability/secret-scrub.js';
import { REDACTED } from '../../../libs/pipeline/build-audit-record.js';

/** A logger writing into an array of parsed lines (and the raw text, to search for leaks). */
function capture(options: Partial<LoggerOptions> = {}) {
  const raw: string[] = [];
  const logger = createLogger({
    level: 'debug',
    name: 'test',
    destination: { write: (line: string) => void raw.push(line) },
    ...options,
  });
  return {
    logger,
    text: () => raw.join(''),
    lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const SECRET = 'sk-live-7f1c2e9a4b6d8f0e1a3c5b7d9e2f4a6c';
const JWT =
  'eyJhbGciOiJFZERTQSIsImtpZCI6ImsxIn0.eyJzdWIiOiJhZ2VudC03IiwidGVuYW50IjoidDEifQ.c2lnbmF0dXJlLWJ5dGVzLWhlcmU';

describe("log lines never contain a call's secrets", () => {
  it('arguments, context, headers and errors carrying a token: the token appears in no line', () => {
    const { logger, text, lines } = capture();
    const args = {
      order_id: 'O-1',
      amount: 5,
      apiKey: SECRET,
      card: { number: '4111111111111111', auth: { accessToken: SECRET } },
      notes: `use Bearer ${SECRET} for the retry`,
    };
    const ctx = {
      principalAssertion: JWT,
      tenant: 't1',
      headers: { Authorization: `Bearer ${SECRET}`, 'X-Api-Key': SECRET, cookie: `session=${SECRET}` },
      deep: {
        a: { b: { c: { d: { e: { password: SECRET, db_password: SECRET, clientSecret: SECRET } } } } },
      },
    };
    const err = new Error(`downstream refused token ${JWT}`, {
      cause: Object.assign(new Error('inner'), { config: { headers: { authorization: `Basic ${SECRET}` } } }),
    });
    const call = withLogContext(logger, { callId: 'call_1', taskId: 'task_9', traceId: 'a'.repeat(32) });

    call.info({ args, ctx }, 'call received');
    call.warn({ err, request: { url: `redis://:${SECRET}@cache:6379/0` } }, `retrying after ${JWT}`);
    call.error(err);
    logger.child({ token: SECRET, nested: { refresh_token: SECRET } }).info('child bindings');
    logger.info({ args: redactArgumentsForLog(args, ['order_id', 'amount', 'card']) }, 'allow-listed');

    const out = text();
    expect(out).not.toContain(SECRET);
    expect(out).not.toContain(JWT);
    expect(out).not.toContain('c2lnbmF0dXJl'); // not even the JWT's signature part
    const [first, second, third, fourth, fifth] = lines();
    expect(first).toMatchObject({
      msg: 'call received',
      callId: 'call_1',
      taskId: 'task_9',
      args: { order_id: 'O-1', amount: 5, apiKey: REDACTED, card: { auth: { accessToken: REDACTED } } },
      ctx: { principalAssertion: REDACTED, tenant: 't1', headers: { Authorization: REDACTED } },
    });
    expect(second?.msg).toBe(`retrying after ${REDACTED}`);
    expect(second?.request).toEqual({ url: `redis://${REDACTED}@cache:6379/0` });
    expect(third?.err).toMatchObject({ type: 'Error' });
    expect(String((third?.err as { message: string }).message)).toContain('downstream refused token');
    expect(fourth).toMatchObject({ token: REDACTED, nested: { refresh_token: REDACTED } });
    expect(fifth?.args).toEqual({
      order_id: 'O-1',
      amount: 5,
      apiKey: REDACTED,
      card: { number: '4111111111111111', auth: { accessToken: REDACTED } },
      notes: REDACTED,
    });
  });

  it('any secret-named field at any depth, in any spelling, is redacted (property)', () => {
    const secretName = fc.constantFrom(
      'token',
      'Authorization',
      'x-api-key',
      'API_KEY',
      'accessToken',
      'principal_assertion',
      'dbPassword',
      'webhook_secret',
      'Set-Cookie',
      'privateKey',
    );
    const path = fc.array(fc.constantFrom('a', 'b', 'headers', 'ctx', 'items'), { maxLength: 15 });
    fc.assert(
      fc.property(path, secretName, (keys, name) => {
        let obj: Record<string, unknown> = { [name]: SECRET };
        for (const k of [...keys].reverse()) obj = { [k]: k === 'items' ? [obj] : obj };
        const { logger, text } = capture();
        logger.info({ payload: obj }, 'm');
        expect(text()).not.toContain(SECRET);
      }),
      { numRuns: 200 },
    );
  });

  it('counts and ids that merely contain "token" in their name are kept', () => {
    expect(isSecretKey('inputTokens')).toBe(false);
    expect(isSecretKey('maxTokens')).toBe(false);
    expect(isSecretKey('idempotencyKey')).toBe(false);
    expect(isSecretKey('tokenBucket')).toBe(false);
    expect(isSecretKey('nextPageToken')).toBe(true);
    const { logger, lines } = capture();
    logger.info({ inputTokens: 12, idempotencyKey: 'k1' }, 'sizes');
    expect(lines()[0]).toMatchObject({ inputTokens: 12, idempotencyKey: 'k1' });
  });

  it('scrubbing never mutates the logged object and survives cycles, toJSON and __proto__ keys', () => {
    const input: Record<string, unknown> = JSON.parse(`{"__proto__": {"password": "${SECRET}"}, "ok": 1}`);
    input.self = input;
    input.when = new Date(0);
    input.custom = { toJSON: () => ({ secret: SECRET, shown: true }) };
    const out = scrubSecrets(input);
    expect(out.self).toBe('[circular]');
    expect(out.custom).toEqual({ secret: REDACTED, shown: true });
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ password: REDACTED });
    expect(({} as Record<string, unknown>).password).toBeUndefined();
    expect(
      (Object.getOwnPropertyDescriptor(input, '__proto__')?.value as { password: string }).password,
    ).toBe(SECRET);
    expect(scrubText('plain words stay')).toBe('plain words stay');
  });

  it('redactArgumentsForLog keeps allow-listed fields only, and nothing without an allow-list', () => {
    expect(redactArgumentsForLog({ order_id: 'O-1', amount: 5 }, ['order_id'])).toEqual({
      order_id: 'O-1',
      amount: REDACTED,
    });
    expect(redactArgumentsForLog({ order_id: 'O-1' }, undefined)).toEqual({ order_id: REDACTED });
    expect(redactArgumentsForLog('not an object', ['x'])).toEqual({});
  });
});

describe('context and levels', () => {
  it('a pino child is made only when a context writes a line, once, with every field of nested contexts', () => {
    const { logger, lines } = capture({ level: 'info' });
    const made: unknown[] = [];
    const child = logger.child.bind(logger);
    logger.child = (bindings: Record<string, unknown>) => {
      made.push(bindings);
      return child(bindings);
    };

    const message = withLogContext(logger, {
      topic: 'toolgate.calls',
      partition: 3,
      offset: '42',
      callId: 'outer',
    });
    const call = withLogContext(message, { callId: 'c1', traceId: 'b'.repeat(32) });
    call.debug({ tool: 'refund' }, 'below the level');
    expect(made).toEqual([]);
    expect(lines()).toEqual([]);

    call.info({ tool: 'refund' }, 'handled');
    call.warn({ retry: 2 }, 'again');
    expect(made).toEqual([
      { topic: 'toolgate.calls', partition: 3, offset: '42', callId: 'c1', traceId: 'b'.repeat(32) },
    ]);
    expect(lines().map((l) => [l.msg, l.callId, l.offset, l.traceId])).toEqual([
      ['handled', 'c1', '42', 'b'.repeat(32)],
      ['again', 'c1', '42', 'b'.repeat(32)],
    ]);
    message.info({}, 'the message context writes through its own child');
    expect(made).toHaveLength(2);
    expect(lines()[2]).toMatchObject({ callId: 'outer', offset: '42' });
    expect(lines()[2]).not.toHaveProperty('traceId');
  });

  it('over a port logger, nested contexts add both sets of fields; the logged object wins', () => {
    const seen: object[] = [];
    const port = {
      debug: (o: object) => void seen.push(o),
      info: (o: object) => void seen.push(o),
      warn: (o: object) => void seen.push(o),
      error: (o: object) => void seen.push(o),
    };
    const call = withLogContext(withLogContext(port, { topic: 't', offset: '7', callId: 'outer' }), {
      callId: 'c1',
    });
    call.warn({ offset: 'mine', retry: 1 });
    expect(seen).toEqual([{ topic: 't', offset: 'mine', callId: 'c1', retry: 1 }]);
  });

  it('child loggers carry only the six context fields', () => {
    const { logger, lines } = capture();
    const ctx = {
      callId: 'c1',
      taskId: 't1',
      traceId: 'b'.repeat(32),
      topic: 'toolgate.calls',
      partition: 3,
      offset: '42',
      principalAssertion: JWT,
    };
    withLogContext(logger, ctx).info({}, 'handled');
    const line = lines()[0]!;
    expect(line).toMatchObject({
      callId: 'c1',
      taskId: 't1',
      topic: 'toolgate.calls',
      partition: 3,
      offset: '42',
    });
    expect(line).not.toHaveProperty('principalAssertion');
    expect(line.name).toBe('test');
  });

  it('the level filters lines', () => {
    const { logger, lines } = capture({ level: 'warn' });
    logger.info('dropped');
    logger.warn('kept');
    expect(lines().map((l) => l.msg)).toEqual(['kept']);
  });
});

describe('bus logger adapter', () => {
  it('satisfies the bus logging port, tags lines with the component and scrubs them', () => {
    const { logger, lines, text } = capture();
    const bus: BusLogger = busLogger(logger);
    bus.error({ broker: 'k1:9092', sasl: { password: SECRET } }, 'connection failed');
    bus.debug({ kafkajs: 'Consumer' }, 'fetch');
    expect(text()).not.toContain(SECRET);
    expect(lines().map((l) => [l.component, l.msg])).toEqual([
      ['bus', 'connection failed'],
      ['bus', 'fetch'],
    ]);
  });

  it('a logger that throws never breaks the bus', () => {
    const { logger } = capture();
    const exploding = logger.child({});
    exploding.info = () => {
      throw new Error('disk full');
    };
    const bus = busLogger({ child: () => exploding } as unknown as typeof logger);
    expect(() => bus.info({}, 'x')).not.toThrow();
  });
});

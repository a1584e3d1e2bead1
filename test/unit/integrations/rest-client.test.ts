import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryRateLimiter } from '../../../libs/adapters/memory/memory-rate-limiter.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { createOutboundLimiter } from '../../../libs/execution/outbound-limiter.js';
import { RestClient } from '../../../libs/integrations/rest-client.js';
import { restPath } from '../../../libs/integrations/rest-path.js';
import type { TokenProvider } from '../../../libs/integrations/token-provider.js';
import { json, scriptedServer, type ScriptedServer } from './scripted-server.js';

let server: ScriptedServer;
beforeAll(async () => {
  server = await scriptedServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.seen.length = 0;
});

const doc = z.object({ id: z.string(), title: z.string() });

function client(extra: Partial<ConstructorParameters<typeof RestClient>[0]> = {}): RestClient {
  return new RestClient({
    downstream: 'docs',
    baseUrl: server.url,
    clock: systemClock,
    timeoutMs: 2_000,
    ...extra,
  });
}

async function failure(promise: Promise<unknown>): Promise<ToolgateError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ToolgateError) return err;
    throw new Error(`expected a ToolgateError, got ${String(err)}`);
  }
  throw new Error('expected the request to fail');
}

const get = (c: RestClient, wordings = {}) =>
  c.request({
    method: 'GET',
    path: restPath`/documents/${'d-1'}`,
    auth: { kind: 'none' },
    response: doc,
    wordings,
  });

describe('RestClient error mapping against a live HTTP server', () => {
  it('returns the parsed body of a 2xx answer and sends JSON with the declared method', async () => {
    server.handle((_req, res) => json(res, 201, { id: 'd-1', title: 'Leave policy', extra: 'kept out' }));
    const out = await client().request({
      method: 'POST',
      path: '/documents',
      query: { draft: true, skip: undefined },
      body: { title: 'Leave policy' },
      auth: { kind: 'none' },
      response: doc,
    });
    expect(out).toEqual({ id: 'd-1', title: 'Leave policy' });
    expect(server.seen[0]).toMatchObject({
      method: 'POST',
      url: '/documents?draft=true',
      body: '{"title":"Leave policy"}',
    });
    expect(server.seen[0]!.headers['content-type']).toBe('application/json');
    expect(server.seen[0]!.headers.authorization).toBeUndefined();
  });

  it('404 is CALLER_ERROR the model can fix, with the tool’s own wording and fix', async () => {
    server.handle((_req, res) => json(res, 404, { error: 'no such document d-1 for secret-tenant' }));
    const err = await failure(
      get(client(), {
        notFound: { message: 'No document d-1.', suggestedFix: 'Use an id from search_documents.' },
      }),
    );
    expect(err).toMatchObject({
      code: 'CALLER_ERROR',
      retryable: true,
      message: 'No document d-1.',
      suggestedFix: 'Use an id from search_documents.',
    });
    // The downstream's own text never reaches the message.
    const generic = await failure(get(client()));
    expect(generic).toMatchObject({ code: 'CALLER_ERROR', retryable: true });
    expect(generic.suggestedFix).toBeDefined();
    expect(generic.message).not.toContain('secret-tenant');
  });

  it.each([400, 422])('%i is CALLER_ERROR, retryable with corrected arguments', async (status) => {
    server.handle((_req, res) => json(res, status, { error: 'bad' }));
    const err = await failure(get(client()));
    expect(err).toMatchObject({ code: 'CALLER_ERROR', retryable: true });
    expect(err.suggestedFix).toBeDefined();
  });

  it.each([401, 403])('%i is CALLER_ERROR, not retryable, with no hint how to pass', async (status) => {
    server.handle((_req, res) => json(res, status, { error: 'denied' }));
    const err = await failure(get(client(), { forbidden: { message: 'You may not read this document.' } }));
    expect(err).toMatchObject({
      code: 'CALLER_ERROR',
      retryable: false,
      message: 'You may not read this document.',
    });
    expect(err.suggestedFix).toBeUndefined();
  });

  it('429 is RATE_LIMITED with retryAfterMs from Retry-After seconds, HTTP date or retry-after-ms', async () => {
    server.handle((_req, res) => json(res, 429, {}, { 'retry-after': '3' }));
    expect(await failure(get(client()))).toMatchObject({
      code: 'RATE_LIMITED',
      retryable: true,
      retryAfterMs: 3_000,
    });
    server.handle((_req, res) => json(res, 429, {}, { 'retry-after-ms': '250' }));
    expect(await failure(get(client()))).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 250 });
    const at = new Date(Date.now() + 60_000).toUTCString();
    server.handle((_req, res) => json(res, 429, {}, { 'retry-after': at }));
    const dated = await failure(get(client()));
    expect(dated.code).toBe('RATE_LIMITED');
    expect(dated.retryAfterMs).toBeGreaterThan(50_000);
    expect(dated.retryAfterMs).toBeLessThanOrEqual(61_000);
  });

  it.each([500, 502, 503])('%i is SERVER_ERROR', async (status) => {
    server.handle((_req, res) => json(res, status, {}));
    expect(await failure(get(client()))).toMatchObject({ code: 'SERVER_ERROR', retryable: true });
  });

  it('504 is TIMEOUT: the gateway gave up, the origin may have applied it', async () => {
    server.handle((_req, res) => json(res, 504, {}));
    expect(await failure(get(client()))).toMatchObject({ code: 'TIMEOUT' });
  });

  it('no answer within the timeout is TIMEOUT (outcome unknown)', async () => {
    server.handle(() => undefined);
    const err = await failure(get(client({ timeoutMs: 100 })));
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toMatch(/outcome is unknown/);
  });

  it('the caller aborting mid-request is TIMEOUT too', async () => {
    server.handle(() => undefined);
    const controller = new AbortController();
    const pending = client().request({
      method: 'GET',
      path: '/documents/d-1',
      auth: { kind: 'none' },
      response: doc,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new DOMException('stop', 'AbortError')), 50);
    expect((await failure(pending)).code).toBe('TIMEOUT');
  });

  it('a connection reset mid-request is TIMEOUT', async () => {
    server.handle((_req, res) => {
      res.socket?.destroy();
    });
    expect((await failure(get(client()))).code).toBe('TIMEOUT');
  });

  it('a refused connection is SERVER_ERROR: the request never reached the service', async () => {
    const gone = await scriptedServer();
    const url = gone.url;
    await gone.close();
    expect((await failure(get(client({ baseUrl: url })))).code).toBe('SERVER_ERROR');
  });

  it('a 2xx that is not JSON, not the declared shape or too large is BAD_OUTPUT', async () => {
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
    });
    expect((await failure(get(client()))).code).toBe('BAD_OUTPUT');
    server.handle((_req, res) => json(res, 200, { id: 1 }));
    expect((await failure(get(client()))).code).toBe('BAD_OUTPUT');
    server.handle((_req, res) => json(res, 200, { id: 'd-1', title: 'x'.repeat(5_000) }));
    expect((await failure(get(client({ maxResponseBytes: 1_000 })))).code).toBe('BAD_OUTPUT');
  });
});

describe('RestClient requests', () => {
  it('encodes path values as one segment and refuses values that would move the path', async () => {
    server.handle((_req, res) => json(res, 200, { id: 'x', title: 't' }));
    await client().request({
      method: 'GET',
      path: restPath`/documents/${'a/b?c#d'}`,
      auth: { kind: 'none' },
      response: doc,
    });
    expect(server.seen[0]!.url).toBe('/documents/a%2Fb%3Fc%23d');
    for (const bad of ['..', '.', '', '%2e%2E']) {
      expect(() => restPath`/documents/${bad}`).toThrow(ToolgateError);
    }
    await expect(
      client().request({ method: 'GET', path: '//evil.example/x', auth: { kind: 'none' }, response: doc }),
    ).rejects.toMatchObject({ code: 'INTERNAL' });
  });

  it("forwards the user's own token, and the service token for service calls", async () => {
    server.handle((_req, res) => json(res, 200, { id: 'd-1', title: 't' }));
    const tokens: TokenProvider = {
      getToken: async (tenant, audience) => `svc-${tenant}-${audience}`,
      invalidate: () => undefined,
    };
    const c = client({ tokens, audience: 'documents-api' });
    await c.request({
      method: 'GET',
      path: '/d',
      auth: { kind: 'user', token: 'user-token-1' },
      response: doc,
    });
    await c.request({ method: 'GET', path: '/d', auth: { kind: 'service', tenant: 't1' }, response: doc });
    expect(server.seen.map((r) => r.headers.authorization)).toEqual([
      'Bearer user-token-1',
      'Bearer svc-t1-documents-api',
    ]);
  });

  it('a service token refused with 401 is dropped and the request sent once more with a fresh one', async () => {
    let issued = 0;
    const invalidated: string[] = [];
    const tokens: TokenProvider = {
      getToken: async () => `svc-${++issued}`,
      invalidate: (_t, _a, token) => invalidated.push(token),
    };
    server.handle((req, res) =>
      req.headers.authorization === 'Bearer svc-1'
        ? json(res, 401, {})
        : json(res, 200, { id: 'd', title: 't' }),
    );
    const c = client({ tokens });
    expect(
      await c.request({ method: 'POST', path: '/d', auth: { kind: 'service', tenant: 't1' }, response: doc }),
    ).toEqual({ id: 'd', title: 't' });
    expect(invalidated).toEqual(['svc-1']);
    expect(server.seen).toHaveLength(2);

    // A second 401 is not retried again: it is a refusal.
    server.handle((_req, res) => json(res, 401, {}));
    server.seen.length = 0;
    await expect(
      c.request({ method: 'GET', path: '/d', auth: { kind: 'service', tenant: 't1' }, response: doc }),
    ).rejects.toMatchObject({ code: 'CALLER_ERROR', retryable: false });
    expect(server.seen).toHaveLength(2);
  });

  it('spends one outbound token per request; a request that gets none in time is RATE_LIMITED and never sent', async () => {
    server.handle((_req, res) => json(res, 200, { id: 'd', title: 't' }));
    const limiter = new MemoryRateLimiter(systemClock);
    const outbound = createOutboundLimiter(
      limiter,
      { docs: { capacity: 2, refillPerSecond: 0.01 } },
      systemClock,
    );
    const c = client({ outbound, timeoutMs: 150 });
    await get(c);
    await get(c);
    const err = await failure(get(c));
    expect(err).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
    expect(err.message).toMatch(/not sent/);
    expect(server.seen).toHaveLength(2);
  });
});

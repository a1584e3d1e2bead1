import { request } from 'node:http';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startHealthServer,
  type HealthServer,
  type Readiness,
} from '../../../libs/observability/health-server.js';
import { createToolgateMetrics } from '../../../libs/observability/metrics.js';
import { recordResult } from '../../../libs/observability/pipeline-metrics.js';
import { parsePromText } from '../../unit/observability/prom-text.js';

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function get(port: number, path: string, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const servers: HealthServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(
  readiness: () => Promise<Readiness>,
  registry = new Registry(),
  readinessTimeoutMs?: number,
) {
  const server = await startHealthServer({
    port: 0,
    host: '127.0.0.1',
    registry,
    readiness,
    ...(readinessTimeoutMs === undefined ? {} : { readinessTimeoutMs }),
  });
  servers.push(server);
  return server;
}

describe('health server over real HTTP', () => {
  it('GET /metrics serves the registry as parseable Prometheus text', async () => {
    const registry = new Registry();
    const metrics = createToolgateMetrics(registry, {
      isKnownTool: (n) => n === 'get_weather',
      consumerLag: async () => [
        { group: 'toolgate-executors', topic: 'toolgate.calls', partition: 0, lag: 3 },
      ],
    });
    recordResult(metrics, { callId: 'c1', tool: 'get_weather', outcome: 'SUCCESS', toolInvocations: 1 }, 120);
    const server = await start(async () => ({ ready: true, checks: {} }), registry);
    expect(server.port).toBeGreaterThan(0);

    const reply = await get(server.port, '/metrics');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe(registry.contentType);
    const families = parsePromText(reply.body);
    const calls = families.get('toolgate_tool_calls_total')?.samples ?? [];
    expect(calls).toEqual([
      { name: 'toolgate_tool_calls_total', labels: { tool: 'get_weather', outcome: 'SUCCESS' }, value: 1 },
    ]);
    expect(families.get('toolgate_consumer_lag_messages')?.samples[0]?.value).toBe(3);
  });

  it('GET /healthz answers 200 whatever readiness says', async () => {
    const server = await start(async () => ({ ready: false, checks: { kafka: 'not connected' } }));
    const reply = await get(server.port, '/healthz');
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ status: 'ok' });
  });

  it('GET /readyz: 200 when ready, 503 with the failed checks when not', async () => {
    let answer: Readiness = { ready: true, checks: { kafka: true, redis: true } };
    const server = await start(async () => answer);
    const ok = await get(server.port, '/readyz');
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ ready: true, checks: { kafka: true, redis: true } });

    answer = {
      ready: false,
      checks: { kafka: true, redis: 'connect ECONNREFUSED redis://:hunter2pass@cache:6379', postgres: false },
    };
    const down = await get(server.port, '/readyz');
    expect(down.status).toBe(503);
    const body = JSON.parse(down.body) as { ready: boolean; failed: Record<string, unknown> };
    expect(body.ready).toBe(false);
    expect(Object.keys(body.failed).sort()).toEqual(['postgres', 'redis']);
    expect(down.body).not.toContain('hunter2pass'); // the endpoint is unauthenticated
  });

  it('a readiness function that throws or hangs is answered 503, and the server keeps serving', async () => {
    let mode: 'throw' | 'hang' = 'throw';
    const server = await start(
      () =>
        mode === 'throw'
          ? Promise.reject(new Error('redis ping failed'))
          : new Promise<never>(() => undefined),
      new Registry(),
      100,
    );
    const thrown = await get(server.port, '/readyz');
    expect(thrown.status).toBe(503);
    expect(JSON.parse(thrown.body).failed).toEqual({ readiness: 'redis ping failed' });
    mode = 'hang';
    const hung = await get(server.port, '/readyz');
    expect(hung.status).toBe(503);
    expect(JSON.parse(hung.body).failed.readiness).toMatch(/no answer within 100 ms/);
    expect((await get(server.port, '/healthz')).status).toBe(200);
  });

  it('unknown paths are 404, other methods 405, HEAD has no body', async () => {
    const server = await start(async () => ({ ready: true, checks: {} }));
    expect((await get(server.port, '/nope')).status).toBe(404);
    const post = await get(server.port, '/metrics', 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    const head = await get(server.port, '/healthz', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect((await get(server.port, '/readyz?verbose=1')).status).toBe(200);
  });

  it('close() stops listening (idempotent); a taken port is refused at start', async () => {
    const server = await start(async () => ({ ready: true, checks: {} }));
    await expect(
      startHealthServer({
        port: server.port,
        host: '127.0.0.1',
        registry: new Registry(),
        readiness: async () => ({ ready: true, checks: {} }),
      }),
    ).rejects.toThrow(/EADDRINUSE/);
    await server.close();
    await server.close();
    await expect(get(server.port, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
  });
});

import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../libs/observability/logger.js';
import type { ServiceSettings } from '../../../libs/runtime/env.js';
import {
  createService,
  type Service,
  type ServiceDefinition,
  type ServiceWorker,
} from '../../../libs/runtime/service.js';

const SETTINGS: ServiceSettings = {
  kafkaBrokers: ['127.0.0.1:9'],
  schemaRegistryUrl: 'http://127.0.0.1:9',
  topicPrefix: 'unused',
  kafka: { sessionTimeoutMs: 6_000, rebalanceTimeoutMs: 15_000, heartbeatMs: 500 },
  httpPort: 0,
  logLevel: 'silent',
};

/** A silent service on a free port whose clients and worker are what `open` makes them. */
function testService(open: ServiceDefinition['open']): Service {
  return createService({
    name: 'test-service',
    settings: SETTINGS,
    instance: { field: 'testId', id: 'test-service-1' },
    logger: createLogger({ level: 'silent', name: 'test-service' }),
    open,
  });
}

function latch(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function readyz(port: number): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: res.status, body: await res.json() };
}

/** A worker that records what happens to it; `stop` waits for `release` when given. */
function recordingWorker(events: string[], release?: Promise<void>): ServiceWorker {
  return {
    start: async () => void events.push('worker started'),
    stop: async () => {
      events.push('worker stopping');
      await release;
      events.push('worker stopped');
    },
  };
}

describe('the service lifecycle every toolgate service shares', () => {
  it('is ready only between start and stop, and closes its clients in reverse order, the endpoint last', async () => {
    const events: string[] = [];
    const opening = latch();
    const reachedOpen = latch();
    const draining = latch();
    let port = 0;
    let dependencyUp = true;
    const service = testService(async (context) => {
      context.onClose('first client', () => void events.push('first client closed'));
      context.onClose('second client', () => void events.push('second client closed'));
      context.readyWhen('dependency', () => dependencyUp || 'dependency down');
      port = context.healthPort;
      reachedOpen.open();
      await opening.promise;
      return recordingWorker(events, draining.promise);
    });
    const started = service.start();
    // The endpoint is up before the worker: probes are answered, and say "starting".
    await reachedOpen.promise;
    expect(await readyz(port)).toMatchObject({ status: 503, body: { failed: { lifecycle: 'starting' } } });
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    opening.open();
    expect((await started).healthPort).toBe(port);
    expect(await readyz(port)).toEqual({
      status: 200,
      body: { ready: true, checks: { lifecycle: true, dependency: true } },
    });
    dependencyUp = false;
    expect(await readyz(port)).toMatchObject({
      status: 503,
      body: { failed: { dependency: 'dependency down' } },
    });
    dependencyUp = true;

    const stopped = service.stop('test');
    expect(await readyz(port)).toMatchObject({ status: 503, body: { failed: { lifecycle: 'stopping' } } });
    draining.open();
    await stopped;
    expect(events).toEqual([
      'worker started',
      'worker stopping',
      'worker stopped',
      'second client closed',
      'first client closed',
    ]);
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    await expect(service.start()).rejects.toThrow(/already started/);
  });

  it('a stop during start-up never starts the worker, and closes what was opened', async () => {
    const events: string[] = [];
    const opening = latch();
    const reachedOpen = latch();
    const service = testService(async (context) => {
      context.onClose('client', () => void events.push('client closed'));
      reachedOpen.open();
      await opening.promise;
      return recordingWorker(events);
    });
    const started = service.start();
    await reachedOpen.promise;
    const stopped = service.stop('early');
    opening.open();
    const { healthPort } = await started;
    expect(healthPort).toBeGreaterThan(0);
    await stopped;
    expect(events).toEqual(['worker stopping', 'worker stopped', 'client closed']);
  });

  it('closes what it opened when start-up fails, and rejects', async () => {
    const events: string[] = [];
    const service = testService(async (context) => {
      context.onClose('client', () => void events.push('client closed'));
      throw new Error('schema registry refused');
    });
    await expect(service.start()).rejects.toThrow('schema registry refused');
    expect(events).toEqual(['client closed']);
    await service.stop();
  });
});

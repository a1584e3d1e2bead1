import { expect } from 'vitest';
import { createLogger } from '../../libs/observability/logger.js';
import type { Service } from '../../libs/runtime/service.js';
import { parsePromText, type Family } from '../unit/observability/prom-text.js';

/** A service's JSON log, kept in memory. */
export interface CapturedLog {
  /** A debug-level logger named `name` (as `createLogger` builds it) writing here. */
  readonly logger: ReturnType<typeof createLogger>;
  /** Every line written so far, parsed. */
  records(): Record<string, unknown>[];
}

/** A logger for a service under test whose lines are kept and can be read back parsed. */
export function capturedLog(name: string): CapturedLog {
  const lines: string[] = [];
  return {
    logger: createLogger({
      level: 'debug',
      name,
      destination: { write: (line: string) => void lines.push(line) },
    }),
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** A started service's HTTP endpoint. */
export interface ServiceEndpoint {
  /** `http://127.0.0.1:<health port>`. */
  readonly base: string;
  /** /metrics now, parsed by family name. */
  metrics(): Promise<Map<string, Family>>;
}

/**
 * Starts `service` and expects /readyz to answer 200 with `{ ready: true, checks }` (every check of
 * the service named, and passing).
 */
export async function startReady(
  service: Service,
  checks: Record<string, boolean>,
): Promise<ServiceEndpoint> {
  const { healthPort } = await service.start();
  const base = `http://127.0.0.1:${healthPort}`;
  const ready = await fetch(`${base}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ ready: true, checks });
  return { base, metrics: async () => parsePromText(await (await fetch(`${base}/metrics`)).text()) };
}

/** Stops `service` and expects its endpoint at `base` to be gone (/healthz refuses the connection). */
export async function stopAndExpectGone(service: Service, base: string): Promise<void> {
  await service.stop('test over');
  await expect(fetch(`${base}/healthz`)).rejects.toThrow();
}

import type { Logger as PinoLogger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { systemClock } from '../../libs/core/system-clock.js';
import { startHealthServer } from '../../libs/observability/health-server.js';
import { createLogger } from '../../libs/observability/logger.js';
import { readinessChecks, type ReadinessCheck } from '../../libs/observability/readiness.js';
import type { Clock } from '../../libs/ports/clock.js';
import type { ServiceSettings } from './service-env.js';

/** The part of a service that does its work: started once everything is open, stopped first. */
export interface ServiceWorker {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** What a service's `open` gets to build its worker with. */
export interface ServiceContext {
  readonly logger: PinoLogger;
  /** The process registry /metrics serves; the default Node metrics are already in it. */
  readonly registry: Registry;
  readonly clock: Clock;
  /** The bound port of /metrics, /healthz and /readyz (already answering: "starting"). */
  readonly healthPort: number;
  /** Closed in reverse order of registration when the service stops or fails to start. */
  onClose(name: string, close: () => Promise<unknown> | void): void;
  /** Adds a check to /readyz (beside the lifecycle one); keep it to what the work cannot do without. */
  readyWhen(name: string, check: ReadinessCheck): void;
}

/** A service: what it is called, its shared settings, and how to open it. */
export interface ServiceDefinition {
  /** `name` on every log line ("executor", "audit-sink", "reconciler"). */
  readonly name: string;
  readonly settings: ServiceSettings;
  /** Fields on every log line, e.g. the instance id. */
  readonly base: Readonly<Record<string, string>>;
  /** Default: a pino JSON logger (createLogger) on stdout at `settings.logLevel`. */
  readonly logger?: PinoLogger | undefined;
  /** Opens the clients and builds the worker; register every client with `onClose` as it opens. */
  open(context: ServiceContext): Promise<ServiceWorker>;
}

/** What every service's factory takes besides its configuration. */
export interface ServiceOptions {
  /** Default: a pino JSON logger (createLogger) on stdout at the configured level. */
  readonly logger?: PinoLogger;
}

/** A service process: start it once, stop it once. */
export interface Service {
  /** The process registry /metrics serves. */
  readonly registry: Registry;
  /**
   * Starts the endpoint, opens everything and starts the worker. Resolves with the bound port of
   * /metrics, /healthz and /readyz (the chosen one when HTTP_PORT is 0). Rejects when a start-up
   * step fails, after logging it and closing whatever was opened, or when called a second time.
   */
  start(): Promise<{ readonly healthPort: number }>;
  /**
   * Stops gracefully: /readyz answers 503 at once, the worker stops (draining what it runs), then
   * every client closes, the endpoint last. A stop during start-up is honoured: the worker is never
   * started, and what was opened is closed. Idempotent.
   */
  stop(reason?: string): Promise<void>;
}

/**
 * The lifecycle every toolgate service shares, with its observability: a JSON logger, a process
 * registry with prom-client's default metrics, and the health server on `settings.httpPort` — up
 * first, so probes are answered during start-up, and closed last. /readyz is ready while the worker
 * is started and the service is not stopping, and every check added with `readyWhen` passes.
 */
export function createService(definition: ServiceDefinition): Service {
  const { settings } = definition;
  const logger =
    definition.logger ??
    createLogger({ level: settings.logLevel, name: definition.name, base: definition.base });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const closers: Array<[string, () => Promise<unknown> | void]> = [];
  const checks: Record<string, ReadinessCheck> = {
    lifecycle: () => (phase === 'running' ? true : phase),
  };
  let phase: 'starting' | 'running' | 'stopping' = 'starting';
  let worker: ServiceWorker | undefined;
  let starting: Promise<{ readonly healthPort: number }> | undefined;
  let stopping: Promise<void> | undefined;

  const closeAll = async (): Promise<void> => {
    for (const [name, close] of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        logger.warn({ err, resource: name }, 'close failed');
      }
    }
  };
  const open = async (): Promise<{ readonly healthPort: number }> => {
    const health = await startHealthServer({
      port: settings.httpPort,
      registry,
      // Checks added later are seen: the record is read on every probe.
      readiness: () => readinessChecks({ ...checks })(),
    });
    closers.push(['health server', () => health.close()]);
    logger.info({ port: health.port }, 'health endpoint listening');
    worker = await definition.open({
      logger,
      registry,
      clock: systemClock,
      healthPort: health.port,
      onClose: (name, close) => void closers.push([name, close]),
      readyWhen: (name, check) => void (checks[name] = check),
    });
    // A stop that arrived during start-up wins: the worker is never started.
    if (stopping === undefined) await worker.start();
    if (stopping === undefined) phase = 'running';
    return { healthPort: health.port };
  };

  const stop = (reason = 'stop requested'): Promise<void> => {
    stopping ??= (async () => {
      phase = 'stopping';
      logger.info({ reason }, 'stopping');
      await starting?.catch(() => undefined);
      await worker?.stop();
      await closeAll();
      logger.info('stopped');
    })();
    return stopping;
  };

  return {
    registry,
    start() {
      if (starting !== undefined)
        return Promise.reject(new Error(`the ${definition.name} was already started`));
      starting = open().catch(async (err: unknown) => {
        logger.error({ err }, `${definition.name} failed to start`);
        await closeAll();
        throw err;
      });
      return starting;
    },
    stop,
  };
}

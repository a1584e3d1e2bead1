import type { Logger as PinoLogger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { systemClock } from '../core/system-clock.js';
import { topicNames, type TopicNames } from '../events/topics.js';
import { startHealthServer } from '../observability/health-server.js';
import { createLogger } from '../observability/logger.js';
import { readinessChecks, type ReadinessCheck } from '../observability/readiness.js';
import type { Clock } from '../core/clock.js';
import { startTraceExport, TraceExportConfigError, type TraceExport } from '../observability/otel-export.js';
import type { CatalogFactory } from '../catalog/catalog.js';
import { loadCatalogFactory } from './catalog-module.js';
import { launchedByNpm, watchParent } from './parent-watch.js';
import { ServiceConfigError, type ServiceSettings } from './env.js';

/** The part of a service that does its work: started once everything is open, stopped first. */
export interface ServiceWorker {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** What a service's `open` gets to build its worker with. */
export interface ServiceContext {
  /** The service's shared settings (bus, registry, topic prefix, Kafka timing). */
  readonly settings: ServiceSettings;
  /** The topic names of `settings.topicPrefix`. */
  readonly topics: TopicNames;
  /** This instance's id: the client id its Kafka clients introduce themselves with. */
  readonly instanceId: string;
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
  /**
   * This instance: `id` (unique per running instance) is on every log line under `field` (e.g.
   * `executorId`) and is the client id of its Kafka clients.
   */
  readonly instance: { readonly field: string; readonly id: string };
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

/** What the factory of a service that runs the tools' catalog takes besides its configuration. */
export interface CatalogServiceOptions extends ServiceOptions {
  /** Default: the factory exported by the catalog module the configuration names (`catalogModule`). */
  readonly catalog?: CatalogFactory;
}

/**
 * {@link createService} for a service built from its configuration the common way: named `name`,
 * the configuration its shared settings, the configuration's `idField` its instance id (on every log
 * line under that name), `options.logger` its logger, and `open` what opens its clients and builds
 * its worker.
 */
export function createConfiguredService<F extends string>(
  name: string,
  config: ServiceSettings & { readonly [K in F]: string },
  idField: F,
  options: ServiceOptions,
  open: (context: ServiceContext) => Promise<ServiceWorker>,
): Service {
  return createService({
    name,
    settings: config,
    instance: { field: idField, id: config[idField] },
    logger: options.logger,
    open,
  });
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
    createLogger({
      level: settings.logLevel,
      name: definition.name,
      base: { [definition.instance.field]: definition.instance.id },
    });
  const registry = new Registry();
  // prom-client's default 10 ms event-loop sampling: with a coarser one, a scrape that finds no
  // sample since the last one is written `Nan`, which Prometheus cannot parse (the whole scrape fails).
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
      settings,
      topics: topicNames(settings.topicPrefix),
      instanceId: definition.instance.id,
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

/** What {@link runServiceProcess} takes besides the configuration loader and the factory. */
export interface ServiceProcessOptions {
  /** `service.name` of exported spans unless OTEL_SERVICE_NAME says otherwise. Default: "toolgate". */
  readonly serviceName?: string;
}

/**
 * Runs a service as the process's main: `load()` parses the configuration (a bad one is printed to
 * stderr — it names variables, never values — and the exit code is 1); SIGTERM or SIGINT stops the
 * service gracefully and the process exits 0 once everything is closed — so does the exit of the
 * npm process that started it (`npx toolgate …`, which does not pass signals on); a failed start (already
 * logged, and cleaned up, by the service) sets exit code 1. Resolves once the service started, or
 * failed to.
 *
 * Trace export (libs/observability/otel-export.ts) is registered after the configuration parsed and
 * before the service is created, when the OpenTelemetry variables ask for it
 * (OTEL_EXPORTER_OTLP_ENDPOINT); without them nothing is registered. Queued spans are exported
 * after the service stopped (its last spans included) and before the process exits; a bad
 * OpenTelemetry variable is a configuration error like any other.
 */
export async function runServiceProcess<C>(
  load: () => C,
  create: (config: C) => Service,
  options: ServiceProcessOptions = {},
): Promise<void> {
  let config: C;
  let traces: TraceExport | null;
  try {
    config = load();
    traces = startTraceExport({ defaultServiceName: options.serviceName ?? 'toolgate' });
  } catch (err) {
    const named = err instanceof ServiceConfigError || err instanceof TraceExportConfigError;
    process.stderr.write(`${named ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const flushTraces = async (): Promise<void> => {
    await traces?.shutdown();
  };
  const service = create(config);
  let endParentWatch = (): void => undefined;
  const stop = (reason: string): void => {
    endParentWatch();
    void service.stop(reason).finally(flushTraces);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => stop(signal));
  // Under npx / npm exec a signal to npm stops the shell between it and this process, never this
  // process: its parent going away is then the stop request (see launchedByNpm).
  if (launchedByNpm())
    endParentWatch = watchParent(() => stop('parent process exited'), { clock: systemClock });
  try {
    await service.start();
  } catch {
    endParentWatch();
    process.exitCode = 1;
    await flushTraces();
  }
}

/**
 * A service as its process runs it: the command that starts it, how it reads its environment,
 * whether it runs the tools' catalog, and how it is built. Each service exports one; its main.ts
 * and the `toolgate <command>` bin both run it with {@link runServiceMain}, so the two start it
 * the same way.
 */
export interface ServiceMain<C> {
  /** The bin's command: `toolgate <command>` ("executor", "audit-sink", …). */
  readonly command: string;
  /** One line for `--help`, lower-case, no full stop. */
  readonly summary: string;
  /** `service.name` of exported spans unless OTEL_SERVICE_NAME says otherwise, e.g. "toolgate-executor". */
  readonly serviceName: string;
  /** Parses the environment; throws a {@link ServiceConfigError} naming every bad variable. */
  load(): C;
  /**
   * The catalog module the configuration names (TOOLGATE_CATALOG_MODULE); present only for a
   * service that runs the tools' catalog, which then takes `--catalog <module>`.
   */
  catalogModule?(config: C): string | undefined;
  /** The service, with the catalog factory `--catalog` or the configuration named (undefined: none named). */
  create(config: C, catalog: CatalogFactory | undefined): Service;
}

/** Where {@link runServiceMain} writes: usage to `stdout`, errors to `stderr`. */
export interface ServiceMainIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

function usage<C>(main: ServiceMain<C>): string {
  const catalog = main.catalogModule !== undefined;
  return `Usage: toolgate ${main.command}${catalog ? ' [--catalog <module>]' : ''}

${main.summary[0]!.toUpperCase()}${main.summary.slice(1)}.
Configuration comes from the environment (see the executor's README for every variable).
${
  catalog
    ? `
  --catalog <module>  your tools: a .ts or .js file (relative to the working directory) or a
                      package whose default export is defineCatalog({ tools }) or a function
                      (env) => catalog. Default: $TOOLGATE_CATALOG_MODULE, else the store catalog.
`
    : ''
}
Stops gracefully on SIGTERM or SIGINT (running calls finish) and exits 0; a bad configuration or
catalog, or a failed start, exits 1.
`;
}

/**
 * Runs `main` as the process's service with the command-line arguments `args` (`--catalog
 * <module>` for a service with a catalog, `--help`), and resolves once the service started or
 * failed to. The configuration is parsed, then the catalog module (`--catalog`, else the
 * configuration's) is loaded, before anything connects: a bad environment or catalog costs the
 * lines on stderr that name the variables or the file (`toolgate <command>: …`) and exit code 1; an
 * unknown argument exit code 2. From there {@link runServiceProcess} runs it (signals, trace
 * export, exit code 1 on a failed start).
 */
export async function runServiceMain<C>(
  main: ServiceMain<C>,
  args: readonly string[],
  io: ServiceMainIo,
  cwd: string = process.cwd(),
): Promise<void> {
  const fail = (message: string, exitCode: number): void => {
    io.stderr.write(`toolgate ${main.command}: ${message}\n`);
    process.exitCode = exitCode;
  };
  let flag: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--help' || arg === '-h') {
      io.stdout.write(usage(main));
      return;
    }
    if (main.catalogModule !== undefined && (arg === '--catalog' || arg.startsWith('--catalog='))) {
      const value = arg === '--catalog' ? args[++i] : arg.slice('--catalog='.length);
      if (value === undefined || value === '') return fail('--catalog needs a module path', 2);
      flag = value;
      continue;
    }
    return fail(`unknown argument ${JSON.stringify(arg)}; see 'toolgate ${main.command} --help'`, 2);
  }
  let config: C;
  let catalog: CatalogFactory | undefined;
  try {
    config = main.load();
    const module = flag ?? main.catalogModule?.(config);
    catalog = module === undefined ? undefined : await loadCatalogFactory(module, cwd);
  } catch (err) {
    // A configuration error lists every bad variable on lines of its own; a catalog error is one line.
    return fail(err instanceof Error ? err.message : String(err), 1);
  }
  await runServiceProcess(
    () => config,
    (c) => main.create(c, catalog),
    { serviceName: main.serviceName },
  );
}

import { Counter, type Registry } from 'prom-client';

/** What the console counts beyond the default process metrics. Recording never throws. */
export interface ConsoleMetrics {
  /** A request answered 503: no database connection came free in time (the pool is saturated). */
  observeOverloaded(): void;
}

/**
 * The console's metrics in `registry` (the service's, never prom-client's global one):
 * `toolgate_ops_console_overloaded_total`, requests shed with 503 + Retry-After because the
 * Postgres pool had no connection to give within its wait. Calling it twice on one registry throws.
 */
export function createConsoleMetrics(registry: Registry): ConsoleMetrics {
  const overloaded = new Counter({
    name: 'toolgate_ops_console_overloaded_total',
    help: 'Ops console requests answered 503 (Retry-After) because no Postgres connection was free in time',
    registers: [registry],
  });
  return {
    observeOverloaded: () => overloaded.inc(),
  };
}

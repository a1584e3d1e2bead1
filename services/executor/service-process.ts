import { ServiceConfigError } from './service-env.js';
import type { Service } from './service-runtime.js';

/**
 * Runs a service as the process's main: `load()` parses the configuration (a bad one is printed to
 * stderr — it names variables, never values — and the exit code is 1); SIGTERM or SIGINT stops the
 * service gracefully and the process exits 0 once everything is closed; a failed start (already
 * logged, and cleaned up, by the service) sets exit code 1. Resolves once the service started, or
 * failed to.
 */
export async function runServiceProcess<C>(load: () => C, create: (config: C) => Service): Promise<void> {
  let config: C;
  try {
    config = load();
  } catch (err) {
    process.stderr.write(`${err instanceof ServiceConfigError ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const service = create(config);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => void service.stop(signal));
  }
  try {
    await service.start();
  } catch {
    process.exitCode = 1;
  }
}

import { ExecutorConfigError, loadExecutorConfig } from './config.js';
import { createExecutorService } from './service.js';

/**
 * The executor process (see service.ts for what it wires). SIGTERM or SIGINT stops it gracefully
 * (running calls finish, outputs publish, offsets commit) and it exits 0; a bad configuration or a
 * failed start exits 1. Run with `npx tsx services/executor/main.ts`.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadExecutorConfig();
  } catch (err) {
    process.stderr.write(`${err instanceof ExecutorConfigError ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const service = createExecutorService(config);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => void service.stop(signal));
  }
  try {
    await service.start();
  } catch {
    // Logged by the service, which also closed what it had opened.
    process.exitCode = 1;
  }
}

await main();

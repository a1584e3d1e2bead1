import { quietLogger, warningsTo } from '../embedded/topology-logger.js';
import { DemoConfigError, loadDemoConfig } from './config.js';
import type { DemoToolgate } from './demo-toolgate.js';
import { startEmbeddedDemo } from './embedded-demo.js';
import { startKafkaDemo } from './kafka-demo.js';
import { ServerUnavailableError } from './server-checks.js';
import { runRefundStory } from './story.js';

/**
 * `npm run demo` — the refund story (six steps) through toolgate in embedded mode: memory
 * bus, memory stores, in-memory fake services, all in this process. `npm run demo -- --kafka` (or
 * TOOLGATE_DEMO_MODE=kafka) runs the same story on Kafka, the schema registry, Redis and Postgres
 * (start Kafka and the registry with `npm run servers:up`). Exits 0 when the story ran, 1 otherwise.
 */
async function main(): Promise<void> {
  const write = (line: string): void => {
    process.stdout.write(`${line}\n`);
  };
  let config;
  try {
    config = loadDemoConfig(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof DemoConfigError ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const logger = config.verbose ? warningsTo((line) => process.stderr.write(`${line}\n`)) : quietLogger;
  write(`toolgate demo — the refund story (${config.mode} mode)`);
  let toolgate: DemoToolgate;
  try {
    toolgate =
      config.mode === 'kafka'
        ? await startKafkaDemo(config.servers, logger, write)
        : await startEmbeddedDemo(logger);
  } catch (err) {
    process.stderr.write(
      `${err instanceof ServerUnavailableError ? err.message : `toolgate did not start: ${String(err)}`}\n`,
    );
    process.exitCode = 1;
    return;
  }
  try {
    await runRefundStory(toolgate, write);
    write('');
    write('Done.');
  } catch (err) {
    process.stderr.write(
      `the story stopped: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = 1;
  } finally {
    await toolgate.stop();
  }
}

await main();

import { quietLogger, warningsTo } from '../embedded/topology-logger.js';
import { cleanUpDemoRun, cleanUpLines } from './clean-up.js';
import { DemoConfigError, loadDemoConfig, type DemoConfig } from './config.js';
import type { DemoToolgate } from './demo-toolgate.js';
import { startEmbeddedDemo } from './embedded-demo.js';
import { kafkaRunFollowUp } from './follow-up.js';
import { demoHelp } from './help.js';
import { startKafkaDemo } from './kafka-demo.js';
import { checkServers, ServerUnavailableError } from './server-checks.js';
import { runRefundStory } from './story.js';

/**
 * `npm run demo` — the refund story (six steps) through toolgate in embedded mode: memory
 * bus, memory stores, in-memory fake services, all in this process. `npm run demo -- --kafka` (or
 * TOOLGATE_DEMO_MODE=kafka) runs the same story on Kafka, the schema registry, Redis and Postgres
 * (start Kafka and the registry with `npm run servers:up`) and ends by printing how to inspect the
 * run with the toolgate CLI and how to remove it: `npm run demo -- --clean-up <run-id>`.
 * `--help` prints help.ts. Exits 0 when the story ran (or the clean-up finished), 1 otherwise.
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
  if (config.action.kind === 'help') {
    process.stdout.write(demoHelp());
    return;
  }
  if (config.action.kind === 'clean-up') {
    await cleanUp(config.servers, config.action.runId, write);
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
    if (toolgate.kafkaRun !== undefined) {
      write('');
      for (const line of kafkaRunFollowUp(toolgate.kafkaRun.runId, toolgate.kafkaRun.servers)) write(line);
    }
  } catch (err) {
    process.stderr.write(
      `the story stopped: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = 1;
  } finally {
    await toolgate.stop();
  }
}

/** `--clean-up <run-id>`: checks the servers answer, removes the run's resources, reports them. */
async function cleanUp(
  servers: DemoConfig['servers'],
  runId: string,
  write: (line: string) => void,
): Promise<void> {
  try {
    await checkServers(servers);
    for (const line of cleanUpLines(await cleanUpDemoRun(servers, runId))) write(line);
  } catch (err) {
    process.stderr.write(
      `${err instanceof ServerUnavailableError ? err.message : `the clean-up of ${runId} failed: ${String(err)}`}\n`,
    );
    process.exitCode = 1;
  }
}

await main();

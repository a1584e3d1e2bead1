#!/usr/bin/env node
/**
 * The `toolgate` bin (package.json "bin"; `npm run toolgate -- <args>` from source): the services
 * (`toolgate executor --catalog ./my-tools.ts`, see serve.ts) and the ops commands (run-cli.ts).
 * This file only binds them to the process: arguments, streams, and the exit code (set, not forced,
 * so buffered output to a pipe is flushed before the process ends).
 */
import { runCli } from './run-cli.js';
import { SERVICE_NAMES } from './service-names.js';

// Reading into a closed pipe (`toolgate audit query | head`) is not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

const argv = process.argv.slice(2);
const io = { stdout: process.stdout, stderr: process.stderr };
// The service commands' modules (Kafka, Redis, Postgres clients) load only when one is named.
if (SERVICE_NAMES.has(argv[0] ?? '')) {
  const { runServiceCommand } = await import('./serve.js');
  await runServiceCommand(argv, io);
} else {
  process.exitCode = await runCli(argv, io);
}

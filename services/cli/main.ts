#!/usr/bin/env node
/**
 * The `toolgate` ops CLI entry point (package.json "bin"; `npm run toolgate -- <args>` from source).
 * Everything happens in runCli; this file only binds it to the process: arguments, streams, and the
 * exit code (set, not forced, so buffered output to a pipe is flushed before the process ends).
 */
import { runCli } from './run-cli.js';

// Reading into a closed pipe (`toolgate audit query | head`) is not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });

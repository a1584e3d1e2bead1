import { runServiceMain } from '../../libs/runtime/service.js';
import { EXECUTOR_MAIN } from './service.js';

/**
 * The executor process, as `toolgate executor` runs it (see service.ts for what it wires), with the
 * catalog module from TOOLGATE_CATALOG_MODULE. SIGTERM or SIGINT stops it gracefully (running calls
 * finish, outputs publish, offsets commit) and it exits 0; a bad configuration or catalog, or a
 * failed start, exits 1. Run with `npx tsx services/executor/main.ts`.
 */
await runServiceMain(EXECUTOR_MAIN, [], { stdout: process.stdout, stderr: process.stderr });

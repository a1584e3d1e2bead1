import { runServiceMain } from '../../libs/runtime/service.js';
import { OPS_CONSOLE_MAIN } from './service.js';

/**
 * The ops console process (see service.ts for what it wires). SIGTERM or SIGINT stops it: the pages
 * stop listening, then every client closes; it exits 0. A bad configuration or a failed start exits
 * 1. Run with `npx tsx services/ops-console/main.ts` (or `toolgate ops-console`).
 */
await runServiceMain(OPS_CONSOLE_MAIN, [], { stdout: process.stdout, stderr: process.stderr });

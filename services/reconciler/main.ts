import { runServiceMain } from '../../libs/runtime/service.js';
import { RECONCILER_MAIN } from './service.js';

/**
 * The reconciler process (see service.ts for what it wires). SIGTERM or SIGINT stops it: no new
 * dead letter or check starts, checks in progress finish, deliveries get SHUTDOWN_GRACE_MS; it exits
 * 0. A bad configuration or a failed start exits 1. Run with `npx tsx services/reconciler/main.ts`.
 */
await runServiceMain(RECONCILER_MAIN, [], { stdout: process.stdout, stderr: process.stderr });

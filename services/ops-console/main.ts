import { runServiceCommand } from '../cli/serve.js';

/**
 * The ops console process (see service.ts for what it wires). SIGTERM or SIGINT stops it: the pages
 * stop listening, then every client closes; it exits 0. A bad configuration or a failed start exits
 * 1. Run with `npx tsx services/ops-console/main.ts` (or `toolgate ops-console`).
 */
await runServiceCommand(['ops-console'], { stdout: process.stdout, stderr: process.stderr });

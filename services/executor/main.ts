import { loadExecutorConfig } from './config.js';
import { createExecutorService } from './service.js';
import { runServiceProcess } from './service-process.js';

/**
 * The executor process (see service.ts for what it wires). SIGTERM or SIGINT stops it gracefully
 * (running calls finish, outputs publish, offsets commit) and it exits 0; a bad configuration or a
 * failed start exits 1. Run with `npx tsx services/executor/main.ts`.
 */
await runServiceProcess(() => loadExecutorConfig(), createExecutorService);

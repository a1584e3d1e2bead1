import { runServiceMain } from '../../libs/runtime/service.js';
import { AUDIT_SINK_MAIN } from './service.js';

/**
 * The audit-sink process (see service.ts for what it wires). SIGTERM or SIGINT drains it and it
 * exits 0; a bad configuration or a failed start exits 1. Run with `npx tsx services/audit-sink/main.ts`.
 */
await runServiceMain(AUDIT_SINK_MAIN, [], { stdout: process.stdout, stderr: process.stderr });

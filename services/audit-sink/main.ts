import { runServiceCommand } from '../cli/serve.js';

/**
 * The audit-sink process (see service.ts for what it wires). SIGTERM or SIGINT drains it and it
 * exits 0; a bad configuration or a failed start exits 1. Run with `npx tsx services/audit-sink/main.ts`.
 */
await runServiceCommand(['audit-sink'], { stdout: process.stdout, stderr: process.stderr });

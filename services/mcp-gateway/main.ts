import { runServiceCommand } from '../cli/serve.js';

/**
 * The MCP gateway process (see service.ts for what it wires). SIGTERM or SIGINT stops it: it stops
 * listening, open exchanges end, the reply group is left; it exits 0. A bad configuration or a
 * failed start exits 1. Run with `npx tsx services/mcp-gateway/main.ts --catalog <module>`.
 */
await runServiceCommand(['mcp-gateway', ...process.argv.slice(2)], {
  stdout: process.stdout,
  stderr: process.stderr,
});

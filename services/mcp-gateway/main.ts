import { runServiceMain } from '../../libs/runtime/service.js';
import { MCP_GATEWAY_MAIN } from './service.js';

/**
 * The MCP gateway process (see service.ts for what it wires). SIGTERM or SIGINT stops it: it stops
 * listening, open exchanges end, the reply group is left; it exits 0. A bad configuration or a
 * failed start exits 1. Run with `npx tsx services/mcp-gateway/main.ts --catalog <module>`.
 */
await runServiceMain(MCP_GATEWAY_MAIN, process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
});

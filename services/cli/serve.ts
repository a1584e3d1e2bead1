import { runServiceMain, type ServiceMain, type ServiceMainIo } from '../../libs/runtime/service.js';
import { AUDIT_SINK_MAIN } from '../audit-sink/service.js';
import { EXECUTOR_MAIN } from '../executor/service.js';
import { MCP_GATEWAY_MAIN } from '../mcp-gateway/service.js';
import { OPS_CONSOLE_MAIN } from '../ops-console/service.js';
import { RECONCILER_MAIN } from '../reconciler/service.js';

/**
 * The long-running processes the `toolgate` bin can start, by command: `toolgate
 * executor|audit-sink|reconciler|ops-console|mcp-gateway [--catalog PATH]`, configuration from the
 * environment. Each service defines its own (see `ServiceMain`); its main.ts runs the same one.
 */
export const SERVICE_COMMANDS: Readonly<Record<string, ServiceMain<unknown>>> = Object.fromEntries(
  [EXECUTOR_MAIN, RECONCILER_MAIN, OPS_CONSOLE_MAIN, MCP_GATEWAY_MAIN, AUDIT_SINK_MAIN].map((main) => [
    main.command,
    main,
  ]),
);

/**
 * Runs `argv` when it names a service command and resolves once the service started (or failed
 * to: `process.exitCode` is then 1, or 2 for a usage error; see `runServiceMain`); resolves false
 * when `argv` names none.
 */
export async function runServiceCommand(
  argv: readonly string[],
  io: ServiceMainIo,
  cwd: string = process.cwd(),
): Promise<boolean> {
  const [name, ...rest] = argv;
  const main = name === undefined ? undefined : SERVICE_COMMANDS[name];
  if (main === undefined) return false;
  await runServiceMain(main, rest, io, cwd);
  return true;
}

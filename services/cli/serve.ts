import { loadAuditSinkConfig } from '../audit-sink/config.js';
import { createAuditSinkService } from '../audit-sink/service.js';
import { loadCatalogFactory, type CatalogFactory } from '../executor/catalog.js';
import { loadExecutorConfig } from '../executor/config.js';
import { createExecutorService } from '../executor/service.js';
import { ServiceConfigError } from '../executor/service-env.js';
import { runServiceProcess } from '../executor/service-process.js';
import type { Service } from '../executor/service-runtime.js';
import { loadOpsConsoleConfig } from '../ops-console/config.js';
import { createOpsConsoleService } from '../ops-console/service.js';
import { loadMcpGatewayConfig } from '../mcp-gateway/config.js';
import { createMcpGatewayService } from '../mcp-gateway/service.js';
import { loadReconcilerConfig } from '../reconciler/config.js';
import { createReconcilerService } from '../reconciler/service.js';

/** A long-running toolgate process the `toolgate` bin can start. */
interface ServiceCommand {
  readonly summary: string;
  /** Whether it runs the tools' catalog (and so takes --catalog). */
  readonly catalog: boolean;
  /** Parses the environment (throws a config error naming variables) and starts the service. */
  start(catalogFlag: string | undefined, cwd: string): Promise<void>;
}

/**
 * Loads the configuration, then the catalog module (`--catalog`, else the configuration's), then
 * hands both to `create`: a bad environment or catalog fails before anything connects.
 */
async function startWithCatalog<C extends { readonly catalogModule: string | undefined }>(
  serviceName: string,
  load: () => C,
  create: (config: C, catalog: CatalogFactory | undefined) => Service,
  catalogFlag: string | undefined,
  cwd: string,
): Promise<void> {
  const config = load();
  const module = catalogFlag ?? config.catalogModule;
  const catalog = module === undefined ? undefined : await loadCatalogFactory(module, cwd);
  await runServiceProcess(
    () => config,
    (c) => create(c, catalog),
    { serviceName },
  );
}

/** `toolgate executor|audit-sink|reconciler|ops-console [--catalog PATH]`: configuration from the environment. */
export const SERVICE_COMMANDS: Readonly<Record<string, ServiceCommand>> = {
  executor: {
    summary: 'run an executor: calls from Kafka through the guard pipeline to your tools',
    catalog: true,
    start: (flag, cwd) =>
      startWithCatalog(
        'toolgate-executor',
        loadExecutorConfig,
        (config, catalog) => createExecutorService(config, catalog === undefined ? {} : { catalog }),
        flag,
        cwd,
      ),
  },
  reconciler: {
    summary: 'run the reconciler: dead letters into cases, settled by status checks',
    catalog: true,
    start: (flag, cwd) =>
      startWithCatalog(
        'toolgate-reconciler',
        loadReconcilerConfig,
        (config, catalog) => createReconcilerService(config, catalog === undefined ? {} : { catalog }),
        flag,
        cwd,
      ),
  },
  'ops-console': {
    summary: 'run the ops console: cases, dead letters, approvals and audit in the browser',
    catalog: true,
    start: (flag, cwd) =>
      startWithCatalog(
        'toolgate-ops-console',
        loadOpsConsoleConfig,
        (config, catalog) => createOpsConsoleService(config, catalog === undefined ? {} : { catalog }),
        flag,
        cwd,
      ),
  },
  'mcp-gateway': {
    summary: 'run the MCP gateway: MCP clients list and call your tools, guarded, through Kafka',
    catalog: true,
    start: (flag, cwd) =>
      startWithCatalog(
        'toolgate-mcp-gateway',
        loadMcpGatewayConfig,
        (config, catalog) => createMcpGatewayService(config, catalog === undefined ? {} : { catalog }),
        flag,
        cwd,
      ),
  },
  'audit-sink': {
    summary: 'run the audit sink: the audit topic into the append-only Postgres log',
    catalog: false,
    start: () =>
      runServiceProcess(loadAuditSinkConfig, (config) => createAuditSinkService(config), {
        serviceName: 'toolgate-audit-sink',
      }),
  },
};

function usage(name: string, command: ServiceCommand): string {
  return `Usage: toolgate ${name}${command.catalog ? ' [--catalog <module>]' : ''}

${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.
Configuration comes from the environment (see the executor's README for every variable).
${
  command.catalog
    ? `
  --catalog <module>  your tools: a .ts or .js file (relative to the working directory) or a
                      package whose default export is defineCatalog({ tools }) or a function
                      (env) => catalog. Default: $TOOLGATE_CATALOG_MODULE, else the store catalog.
`
    : ''
}
Stops gracefully on SIGTERM or SIGINT (running calls finish) and exits 0; a bad configuration or
catalog, or a failed start, exits 1.
`;
}

/**
 * Runs `argv` when it names a service command and resolves once the service started (or failed
 * to: `process.exitCode` is then 1, or 2 for a usage error); resolves false when `argv` names none. A catalog module is
 * loaded before anything connects, so a bad one costs one line on stderr naming the file and what
 * is missing.
 */
export async function runServiceCommand(
  argv: readonly string[],
  io: { readonly stdout: NodeJS.WritableStream; readonly stderr: NodeJS.WritableStream },
  cwd: string = process.cwd(),
): Promise<boolean> {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : SERVICE_COMMANDS[name];
  if (name === undefined || command === undefined) return false;
  const fail = (message: string, exitCode: number): true => {
    io.stderr.write(`toolgate ${name}: ${message}\n`);
    process.exitCode = exitCode;
    return true;
  };
  let flag: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--help' || arg === '-h') {
      io.stdout.write(usage(name, command));
      return true;
    }
    if (command.catalog && (arg === '--catalog' || arg.startsWith('--catalog='))) {
      const value = arg === '--catalog' ? rest[++i] : arg.slice('--catalog='.length);
      if (value === undefined || value === '') return fail('--catalog needs a module path', 2);
      flag = value;
      continue;
    }
    return fail(`unknown argument ${JSON.stringify(arg)}; see 'toolgate ${name} --help'`, 2);
  }
  try {
    await command.start(flag, cwd);
  } catch (err) {
    // A configuration error lists every bad variable on lines of its own; a catalog error is one line.
    return fail(err instanceof ServiceConfigError ? err.message : (err as Error).message, 1);
  }
  return true;
}

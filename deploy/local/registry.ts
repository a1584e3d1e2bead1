/**
 * `npm run registry:up` / `registry:down` (also `tsx deploy/local/registry.ts status`): a local
 * Apicurio schema registry, Confluent-compatible at http://127.0.0.1:$SCHEMA_REGISTRY_PORT/apis/ccompat/v7.
 */
import { loadLocalConfig } from './config.js';
import { runLauncherCli } from './launcher-cli.js';
import { stderrLog } from './log.js';
import { registryServer } from './registry-server.js';

const cfg = loadLocalConfig();
process.exitCode = await runLauncherCli(
  process.argv.slice(2),
  registryServer(cfg),
  cfg.startTimeoutMs,
  stderrLog,
);

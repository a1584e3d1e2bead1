/**
 * `npm run registry:up` / `registry:down` (also `tsx deploy/local/registry.ts status`): a local
 * Apicurio schema registry, Confluent-compatible at http://127.0.0.1:$SCHEMA_REGISTRY_PORT/apis/ccompat/v7.
 */
import { runLauncherProcess } from './launcher-cli.js';
import { registryServer } from './registry-server.js';

await runLauncherProcess(registryServer);

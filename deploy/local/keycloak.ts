/**
 * `npm run keycloak:up` / `keycloak:down` (also `tsx deploy/local/keycloak.ts status`): a local
 * Keycloak with the `toolgate` realm at http://127.0.0.1:$TOOLGATE_KEYCLOAK_PORT/realms/toolgate.
 */
import { runLauncherProcess } from './launcher-cli.js';
import { keycloakServer } from './keycloak-server.js';

await runLauncherProcess(keycloakServer);

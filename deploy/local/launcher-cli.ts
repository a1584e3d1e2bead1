import type { LauncherLog } from './log.js';
import type { ManagedServer } from './managed-server.js';
import { isOurs, readPidFile } from './process-control.js';
import { downByHand, tidyServer, upByHand } from './shared-server.js';

/**
 * Runs `up | down | status` for `server` and resolves with the process exit code. `up` prints where
 * the server listens and how long the start took, and marks the instance as started by hand (test
 * runs then never stop it); `down` stops it even while test runs hold leases; `status` exits 1 when
 * it is not answering; `tidy` stops it only if a test run started it and no live run uses it.
 */
export async function runLauncherCli(
  argv: readonly string[],
  server: ManagedServer,
  timeoutMs: number,
  log: LauncherLog,
): Promise<number> {
  const command = argv[0];
  try {
    switch (command) {
      case 'up': {
        const started = Date.now();
        const r = await upByHand(server, timeoutMs, log);
        if (r.started) {
          log(
            `${server.name} up on ${server.address} in ${((Date.now() - started) / 1000).toFixed(1)} s ` +
              `(prepare ${(r.prepareMs / 1000).toFixed(1)} s, ready ${(r.readyMs / 1000).toFixed(1)} s after spawn); ` +
              `logs in ${server.runDir}`,
          );
        }
        return 0;
      }
      case 'down':
        await downByHand(server, log);
        return 0;
      case 'tidy':
        if (!(await tidyServer(server, log))) log(`${server.name}: nothing to tidy`);
        return 0;
      case 'status': {
        const pid = readPidFile(server.pidFile);
        const ours = pid !== undefined && isOurs(pid, server.marker);
        const answers = await server.answers();
        log(
          `${server.name}: ${ours ? `pid ${pid}` : 'no process of ours'}, ` +
            `${answers ? 'answering' : 'not answering'} on ${server.address}`,
        );
        return answers ? 0 : 1;
      }
      default:
        log(`usage: ${server.name} launcher <up|down|status|tidy>`);
        return 2;
    }
  } catch (err) {
    log(`${server.name} ${command}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

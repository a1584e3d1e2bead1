import { loadLocalConfig, type LocalServersConfig } from './config.js';
import { stderrLog, type LauncherLog } from './log.js';
import type { ManagedServer } from './managed-server.js';
import { isOurs, readPidFile } from './process-control.js';
import { downByHand, tidyServer, upByHand } from './shared-server.js';

/** What each launcher command does; each resolves with the process exit code (nothing: 0). */
type LauncherActions = Readonly<Record<'up' | 'down' | 'tidy' | 'status', () => Promise<number | void>>>;

/**
 * Runs the launcher command `command` with `actions` and resolves with the process exit code: an
 * unknown command prints the usage (`usage: <usage> <up|down|status|tidy>`) and exits 2; a failure
 * is logged, naming `name` and the command, and exits 1.
 */
async function runLauncherCommand(
  command: string | undefined,
  actions: LauncherActions,
  names: { readonly name: string; readonly usage: string },
  log: LauncherLog,
): Promise<number> {
  const action =
    command !== undefined && Object.hasOwn(actions, command)
      ? actions[command as keyof LauncherActions]
      : undefined;
  if (action === undefined) {
    log(`usage: ${names.usage} <up|down|status|tidy>`);
    return 2;
  }
  try {
    return (await action()) ?? 0;
  } catch (err) {
    log(`${names.name} ${command}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

/**
 * Runs `up | down | status` for `server` and resolves with the process exit code. `up` prints where
 * the server listens and how long the start took, and marks the instance as started by hand (test
 * runs then never stop it); `down` stops it even while test runs hold leases; `status` exits 1 when
 * it is not answering; `tidy` stops it only if a test run started it and no live run uses it.
 */
export function runLauncherCli(
  argv: readonly string[],
  server: ManagedServer,
  timeoutMs: number,
  log: LauncherLog,
): Promise<number> {
  const actions: LauncherActions = {
    up: async () => {
      const started = Date.now();
      const r = await upByHand(server, timeoutMs, log);
      if (r.started) {
        log(
          `${server.name} up on ${server.address} in ${((Date.now() - started) / 1000).toFixed(1)} s ` +
            `(prepare ${(r.prepareMs / 1000).toFixed(1)} s, ready ${(r.readyMs / 1000).toFixed(1)} s after spawn); ` +
            `logs in ${server.runDir}`,
        );
      }
    },
    down: () => downByHand(server, log),
    tidy: async () => {
      if (!(await tidyServer(server, log))) log(`${server.name}: nothing to tidy`);
    },
    status: async () => {
      const pid = readPidFile(server.pidFile);
      const ours = pid !== undefined && isOurs(pid, server.marker);
      const answers = await server.answers();
      log(
        `${server.name}: ${ours ? `pid ${pid}` : 'no process of ours'}, ` +
          `${answers ? 'answering' : 'not answering'} on ${server.address}`,
      );
      return answers ? 0 : 1;
    },
  };
  return runLauncherCommand(argv[0], actions, { name: server.name, usage: `${server.name} launcher` }, log);
}

/**
 * A launcher script's whole run: {@link runLauncherCli} with the process's arguments, on the server
 * `server` builds from the local configuration, within its start timeout, logging to stderr; the
 * result becomes the process exit code.
 */
export async function runLauncherProcess(server: (cfg: LocalServersConfig) => ManagedServer): Promise<void> {
  const cfg = loadLocalConfig();
  process.exitCode = await runLauncherCli(process.argv.slice(2), server(cfg), cfg.startTimeoutMs, stderrLog);
}

/** A local cluster of several nodes, as {@link runClusterCli} drives it. */
export interface ClusterLauncher {
  /** Its name in messages, e.g. "kafka cluster". */
  readonly name: string;
  /** Its launcher's name in the usage line, e.g. "kafka-cluster". */
  readonly command: string;
  /** Starts it unless it runs; `reach` tells services how to reach it, e.g. `KAFKA_BROKERS=…`. */
  up(log: LauncherLog): Promise<{ readonly started: boolean; readonly reach: string }>;
  /** Stops it, even while test runs hold leases. */
  down(log: LauncherLog): Promise<void>;
  /** Stops the nodes a test run started and no live run holds; resolves with how many it stopped. */
  tidy(log: LauncherLog): Promise<number>;
  /** Logs whether it answers; resolves true when every node does. */
  status(log: LauncherLog): Promise<boolean>;
}

/**
 * Runs `up | down | status | tidy` (`argv[0]`) for `cluster` and resolves with the process exit
 * code: `up` prints how long the start took and how to reach the cluster; `status` exits 1 when it
 * does not answer; an unknown command prints the usage and exits 2; a failure is logged and exits 1.
 */
export function runClusterCli(
  argv: readonly string[],
  cluster: ClusterLauncher,
  log: LauncherLog,
): Promise<number> {
  const actions: LauncherActions = {
    up: async () => {
      const started = Date.now();
      const up = await cluster.up(log);
      log(
        `${cluster.name} ${up.started ? 'up' : 'already running'} in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
          up.reach,
      );
    },
    down: () => cluster.down(log),
    tidy: async () => {
      if ((await cluster.tidy(log)) === 0) log(`${cluster.name}: nothing to tidy`);
    },
    status: async () => ((await cluster.status(log)) ? 0 : 1),
  };
  return runLauncherCommand(argv[0], actions, { name: cluster.name, usage: cluster.command }, log);
}

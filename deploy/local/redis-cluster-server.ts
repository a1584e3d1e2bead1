import { execFile } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { LocalServersConfig, RedisClusterSettings } from './config.js';
import { withFileLock } from './file-lock.js';
import type { LauncherLog } from './log.js';
import { bringDown, bringUp, type ManagedServer } from './managed-server.js';
import { acquireServer, downByHand, releaseServer, tidyServer, upByHand } from './shared-server.js';
import { waitFor } from './wait-for.js';

const run = promisify(execFile);

/** Forming a cluster waits for every node to agree; a cold machine can take a while. */
const LOCK_WAIT_MS = 5 * 60_000;

/** The node ports of a cluster: masters first, then their replicas. */
export function redisClusterPorts(c: RedisClusterSettings): number[] {
  const count = c.masters * (1 + c.replicasPerMaster);
  return Array.from({ length: count }, (_, i) => c.firstPort + i);
}

/** `host:port` of every node: the seed list a cluster client (ioredis `Cluster`) is given. */
export function redisClusterAddresses(c: RedisClusterSettings): string[] {
  return redisClusterPorts(c).map((port) => `${c.host}:${port}`);
}

/** The URL form the services read from REDIS_URL for a cluster (see `parseRedisTarget`). */
export function redisClusterUrl(c: RedisClusterSettings): string {
  return `redis-cluster://${redisClusterAddresses(c).join(',')}`;
}

const clusterDir = (cfg: LocalServersConfig): string =>
  join(cfg.cacheDir, 'run', `redis-cluster-${cfg.redisCluster.firstPort}`);

/**
 * One node of the local Redis Cluster as a {@link ManagedServer}: `redis-server` in cluster mode
 * on 127.0.0.1, nothing persisted, its process title set to the marker (Redis rewrites its command
 * line, so the marker is the whole title). Each fresh start wipes the node's cluster state, so a
 * new start always forms a new cluster; with `keepState` the node starts on its own state again
 * (its nodes.conf: same node id), as a failed node that comes back rejoins its cluster.
 */
export function redisClusterNode(
  cfg: LocalServersConfig,
  port: number,
  options: { readonly keepState?: boolean } = {},
): ManagedServer {
  const c = cfg.redisCluster;
  const runDir = join(clusterDir(cfg), `node-${port}`);
  const marker = `toolgate-redis-cluster-${port}`;
  return {
    name: `redis cluster node ${port}`,
    marker,
    runDir,
    pidFile: join(runDir, 'redis.pid'),
    logFile: join(runDir, 'stdout.log'),
    address: `${c.host}:${port}`,
    host: c.host,
    ports: [port, port + 10_000],
    portVariables: ['TOOLGATE_REDIS_CLUSTER_PORT'],
    answers: async () => (await redisCli(c.host, port, 'ping')).trim() === 'PONG',
    async prepare() {
      const dataDir = join(runDir, 'data');
      if (options.keepState !== true) {
        rmSync(dataDir, { recursive: true, force: true });
        rmSync(join(runDir, 'stdout.log'), { force: true });
      }
      mkdirSync(dataDir, { recursive: true });
      return {
        command: 'redis-server',
        args: [
          '--port',
          String(port),
          '--bind',
          c.host,
          '--protected-mode',
          'no',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dataDir, 'nodes.conf'),
          '--cluster-node-timeout',
          String(c.nodeTimeoutMs),
          '--dir',
          dataDir,
          '--save',
          '',
          '--appendonly',
          'no',
          // A replica syncs the moment it attaches (the default waits 5 s for more replicas): a
          // replica that has never synced cannot take over from its master.
          '--repl-diskless-sync-delay',
          '0',
          '--daemonize',
          'no',
          '--proc-title-template',
          marker,
        ],
        cwd: runDir,
        logFile: join(runDir, 'stdout.log'),
      };
    },
  };
}

/** The cluster's nodes in port order. */
export function redisClusterNodes(cfg: LocalServersConfig): ManagedServer[] {
  return redisClusterPorts(cfg.redisCluster).map((port) => redisClusterNode(cfg, port));
}

async function redisCli(host: string, port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', host, '-p', String(port), ...args], { timeout: 5_000 });
  return stdout;
}

/** One node's view of the cluster, from CLUSTER INFO. */
interface NodeView {
  readonly state: string;
  readonly knownNodes: number;
  readonly slotsAssigned: number;
}

async function nodeView(host: string, port: number): Promise<NodeView> {
  const info = Object.fromEntries(
    (await redisCli(host, port, 'cluster', 'info'))
      .split(/\r?\n/)
      .map((line) => line.split(':'))
      .filter((kv): kv is [string, string] => kv.length === 2),
  );
  return {
    state: info.cluster_state ?? 'unknown',
    knownNodes: Number(info.cluster_known_nodes ?? 0),
    slotsAssigned: Number(info.cluster_slots_assigned ?? 0),
  };
}

const ALL_SLOTS = 16_384;

/**
 * True when every master has its replicas attached and each replica's link to its master is up:
 * only a replica that has synced can take over when its master fails.
 */
async function replicasInSync(c: RedisClusterSettings): Promise<boolean> {
  const roles = await Promise.all(
    redisClusterPorts(c).map(async (port) => {
      const info = await redisCli(c.host, port, 'info', 'replication');
      const field = (name: string): string | undefined =>
        new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
      return {
        role: field('role'),
        linkUp: field('master_link_status') === 'up',
        replicas: Number(field('connected_slaves') ?? 0),
      };
    }),
  );
  const masters = roles.filter((r) => r.role === 'master');
  const replicas = roles.filter((r) => r.role === 'slave');
  return (
    masters.length === c.masters &&
    masters.every((m) => m.replicas >= c.replicasPerMaster) &&
    replicas.length === c.masters * c.replicasPerMaster &&
    replicas.every((r) => r.linkUp)
  );
}

/** The nodes run but are neither one formed cluster nor all fresh. */
class HalfFormedClusterError extends Error {}

/**
 * Makes the running nodes one cluster: nothing to do when every node already sees all of them with
 * every slot assigned; from fresh nodes (each alone, no slots) `redis-cli --cluster create` assigns
 * the slots evenly over the masters and one replica to each. Nodes in any other state (a cluster
 * half-formed by an interrupted start, a node restarted alone) are refused with what to run.
 * Resolves when every node answers cluster_state:ok.
 */
async function formCluster(cfg: LocalServersConfig, timeoutMs: number, log: LauncherLog): Promise<void> {
  const c = cfg.redisCluster;
  const ports = redisClusterPorts(c);
  const views = await Promise.all(ports.map((port) => nodeView(c.host, port)));
  const formed = views.every(
    (v) => v.state === 'ok' && v.knownNodes === ports.length && v.slotsAssigned === ALL_SLOTS,
  );
  if (formed) return;
  const fresh = views.every((v) => v.knownNodes === 1 && v.slotsAssigned === 0);
  if (!fresh) {
    throw new HalfFormedClusterError(
      `redis cluster on ${redisClusterAddresses(c).join(',')} is neither formed nor fresh ` +
        `(${views.map((v, i) => `${ports[i]}: ${v.state}, ${v.knownNodes} nodes`).join('; ')}); ` +
        `run 'npm run redis-cluster:down' and start it again`,
    );
  }
  const started = Date.now();
  await run(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...redisClusterAddresses(c),
      '--cluster-replicas',
      String(c.replicasPerMaster),
      '--cluster-yes',
    ],
    { timeout: timeoutMs },
  );
  await waitFor(
    async () =>
      (await Promise.all(ports.map((port) => nodeView(c.host, port)))).every(
        (v) => v.state === 'ok' && v.knownNodes === ports.length,
      ) && (await replicasInSync(c)),
    { what: `redis cluster on ${redisClusterAddresses(c).join(',')}`, timeoutMs },
  );
  log(
    `redis cluster formed: ${c.masters} masters, ${c.replicasPerMaster} replica each, ` +
      `on ${redisClusterAddresses(c).join(',')} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

/** What {@link acquireRedisCluster} resolves with. */
export interface RedisClusterUp {
  /** Seed addresses, `host:port`. */
  readonly nodes: string[];
  /** The same as a REDIS_URL (`redis-cluster://…`). */
  readonly url: string;
  /** True when this call started at least one node. */
  readonly started: boolean;
}

/**
 * For test runs: ensures every node runs (reusing ours that answer), takes a lease on each for
 * process `holder`, and forms the cluster when its nodes are fresh. Serialized across processes by
 * a lock on the cluster's run directory.
 */
export function acquireRedisCluster(
  cfg: LocalServersConfig,
  log: LauncherLog,
  holder = process.pid,
): Promise<RedisClusterUp> {
  mkdirSync(clusterDir(cfg), { recursive: true });
  return withFileLock(join(clusterDir(cfg), 'cluster.lock'), LOCK_WAIT_MS, async () => {
    const acquire = () =>
      Promise.all(redisClusterNodes(cfg).map((node) => acquireServer(node, cfg.startTimeoutMs, log, holder)));
    let ups = await acquire();
    try {
      await formCluster(cfg, cfg.startTimeoutMs, log);
    } catch (err) {
      if (!(err instanceof HalfFormedClusterError)) throw err;
      // An interrupted start or a node restarted alone: such a cluster serves nobody, so it is
      // started again from fresh nodes.
      log(`${err.message}; starting every node again`);
      for (const node of redisClusterNodes(cfg)) await bringDown(node, log);
      ups = await acquire();
      await formCluster(cfg, cfg.startTimeoutMs, log);
    }
    return {
      nodes: redisClusterAddresses(cfg.redisCluster),
      url: redisClusterUrl(cfg.redisCluster),
      started: ups.some((u) => u.started),
    };
  });
}

/**
 * Drops `holder`'s lease on every node; stops the nodes when it was the last lease, a test run
 * started them and `keep` is false.
 */
export function releaseRedisCluster(
  cfg: LocalServersConfig,
  keep: boolean,
  log: LauncherLog,
  holder = process.pid,
): Promise<void> {
  return withFileLock(join(clusterDir(cfg), 'cluster.lock'), LOCK_WAIT_MS, async () => {
    for (const node of redisClusterNodes(cfg)) await releaseServer(node, keep, log, holder);
  });
}

/** `npm run redis-cluster:up`: starts every node by hand (tests then never stop them) and forms the cluster. */
export function redisClusterUpByHand(cfg: LocalServersConfig, log: LauncherLog): Promise<RedisClusterUp> {
  mkdirSync(clusterDir(cfg), { recursive: true });
  return withFileLock(join(clusterDir(cfg), 'cluster.lock'), LOCK_WAIT_MS, async () => {
    const ups = await Promise.all(
      redisClusterNodes(cfg).map((node) => upByHand(node, cfg.startTimeoutMs, log)),
    );
    await formCluster(cfg, cfg.startTimeoutMs, log);
    return {
      nodes: redisClusterAddresses(cfg.redisCluster),
      url: redisClusterUrl(cfg.redisCluster),
      started: ups.some((u) => u.started),
    };
  });
}

/** `npm run redis-cluster:down`: stops every node, whatever holds leases. */
export function redisClusterDownByHand(cfg: LocalServersConfig, log: LauncherLog): Promise<void> {
  mkdirSync(clusterDir(cfg), { recursive: true });
  return withFileLock(join(clusterDir(cfg), 'cluster.lock'), LOCK_WAIT_MS, async () => {
    for (const node of redisClusterNodes(cfg)) await downByHand(node, log);
  });
}

/**
 * For CI's clean-up and aborted runs: stops the nodes a test run started that no live run holds.
 * Resolves with how many it stopped.
 */
export function tidyRedisCluster(cfg: LocalServersConfig, log: LauncherLog): Promise<number> {
  mkdirSync(clusterDir(cfg), { recursive: true });
  return withFileLock(join(clusterDir(cfg), 'cluster.lock'), LOCK_WAIT_MS, async () => {
    let stopped = 0;
    for (const node of redisClusterNodes(cfg)) if (await tidyServer(node, log)) stopped += 1;
    return stopped;
  });
}

/**
 * Starts a node of a running cluster again on its own cluster state, e.g. after it was killed: it
 * rejoins its cluster, as a replica when its replica was promoted meanwhile. Resolves once it answers.
 */
export async function restartRedisClusterNode(
  cfg: LocalServersConfig,
  port: number,
  log: LauncherLog,
): Promise<void> {
  await bringUp(redisClusterNode(cfg, port, { keepState: true }), cfg.startTimeoutMs, log);
}

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KafkaClusterSettings, LocalServersConfig } from './config.js';
import { withFileLock } from './file-lock.js';
import { kafkaNode, newClusterId } from './kafka-server.js';
import type { LauncherLog } from './log.js';
import { bringDown, bringUp, type ManagedServer } from './managed-server.js';
import { kafkaAnswers } from './kafka-probe.js';
import { isOurs, readPidFile } from './process-control.js';
import { acquireServer, downByHand, releaseServer, tidyServer, upByHand } from './shared-server.js';

/** Three JVMs formatting and electing a quorum on a cold 2-core machine take a while. */
const LOCK_WAIT_MS = 10 * 60_000;

/** `host:port` of every broker: the bootstrap list a client is given. */
export function kafkaClusterBrokers(c: KafkaClusterSettings): string[] {
  return Array.from({ length: c.nodes }, (_, i) => `${c.host}:${c.firstPort + i}`);
}

const clusterDir = (cfg: LocalServersConfig): string =>
  join(cfg.cacheDir, 'run', `kafka-cluster-${cfg.kafkaCluster.firstPort}`);

/**
 * The cluster's nodes: node i (id i + 1) serves clients on `firstPort + i` and its controller on
 * `firstPort + nodes + i`; every node is a voter of the controller quorum. A node counts as up
 * when the cluster lists every node as an alive broker (a quorum needs a majority, and a node that
 * listens may not be registered yet), and every node of one fresh start is
 * formatted with the same cluster id, kept in the cluster's run directory. With `keepStorage` the
 * nodes start on the storage they have (see {@link restartKafkaClusterNode}).
 */
export function kafkaClusterNodes(
  cfg: LocalServersConfig,
  options: { readonly keepStorage?: boolean } = {},
): ManagedServer[] {
  const c = cfg.kafkaCluster;
  const controllerPort = (i: number): number => c.firstPort + c.nodes + i;
  const voters = Array.from({ length: c.nodes }, (_, i) => `${i + 1}@${c.host}:${controllerPort(i)}`).join(
    ',',
  );
  const idFile = join(clusterDir(cfg), 'cluster-id');
  return Array.from({ length: c.nodes }, (_, i) =>
    kafkaNode(cfg, {
      name: `kafka cluster node ${i + 1}`,
      port: c.firstPort + i,
      controllerPort: controllerPort(i),
      runDir: join(clusterDir(cfg), `node-${i + 1}`),
      heap: c.heap,
      clusterId: () => readFileSync(idFile, 'utf8').trim(),
      cluster: {
        nodeId: i + 1,
        voters,
        replicationFactor: c.replicationFactor,
        minInsyncReplicas: c.minInsyncReplicas,
      },
      answerWith: kafkaClusterBrokers(c),
      keepStorage: options.keepStorage === true,
    }),
  );
}

/**
 * Starts node `nodeId` (1-based) of a running cluster again on its own storage, e.g. after it was
 * killed: it rejoins with its id, catches up from the leaders and goes back into the in-sync
 * replicas. Resolves once the cluster answers with the node among its brokers; what it led before
 * stays with the leaders elected meanwhile until a preferred-leader election moves it back.
 */
export async function restartKafkaClusterNode(
  cfg: LocalServersConfig,
  nodeId: number,
  log: LauncherLog,
): Promise<void> {
  const node = kafkaClusterNodes(cfg, { keepStorage: true })[nodeId - 1];
  if (node === undefined) throw new RangeError(`the kafka cluster has no node ${nodeId}`);
  const address = kafkaClusterBrokers(cfg.kafkaCluster)[nodeId - 1]!;
  await withClusterLock(cfg, () =>
    bringUp({ ...node, answers: () => kafkaAnswers([address]) }, cfg.startTimeoutMs, log),
  );
}

/** What {@link acquireKafkaCluster} resolves with. */
export interface KafkaClusterUp {
  readonly brokers: string[];
  /** True when this call started the nodes. */
  readonly started: boolean;
}

/**
 * Starts every node from fresh storage under a new cluster id, unless every node of ours already
 * runs (then they are reused); a cluster with only some nodes running is stopped and started
 * again, since a node formatted alone can never join the others.
 */
async function ensureCluster(
  cfg: LocalServersConfig,
  log: LauncherLog,
  start: (node: ManagedServer) => Promise<{ readonly started: boolean }>,
): Promise<KafkaClusterUp> {
  const nodes = kafkaClusterNodes(cfg);
  const running = nodes.filter((node) => {
    const pid = readPidFile(node.pidFile);
    return pid !== undefined && isOurs(pid, node.marker);
  });
  if (running.length > 0 && running.length < nodes.length) {
    log(`kafka cluster: ${running.length} of ${nodes.length} nodes running; starting every node again`);
    await Promise.all(running.map((node) => bringDown(node, log)));
  }
  const idFile = join(clusterDir(cfg), 'cluster-id');
  if (running.length < nodes.length || !existsSync(idFile)) writeFileSync(idFile, `${newClusterId()}\n`);
  const ups = await Promise.all(nodes.map((node) => start(node)));
  return { brokers: kafkaClusterBrokers(cfg.kafkaCluster), started: ups.some((u) => u.started) };
}

function withClusterLock<T>(cfg: LocalServersConfig, fn: () => Promise<T>): Promise<T> {
  mkdirSync(clusterDir(cfg), { recursive: true });
  return withFileLock(join(clusterDir(cfg), 'cluster.lock'), LOCK_WAIT_MS, fn);
}

/** For test runs: ensures the cluster runs and takes a lease on each node for process `holder`. */
export function acquireKafkaCluster(
  cfg: LocalServersConfig,
  log: LauncherLog,
  holder = process.pid,
): Promise<KafkaClusterUp> {
  return withClusterLock(cfg, () =>
    ensureCluster(cfg, log, (node) => acquireServer(node, cfg.startTimeoutMs, log, holder)),
  );
}

/**
 * Drops `holder`'s leases; stops the nodes when a test run started them and no lease is left.
 * Every stop of the cluster stops its nodes at once: stopped one after another, the last node has
 * no quorum left to shut down cleanly with and waits out the whole grace before its SIGKILL.
 */
export function releaseKafkaCluster(
  cfg: LocalServersConfig,
  keep: boolean,
  log: LauncherLog,
  holder = process.pid,
): Promise<void> {
  return withClusterLock(cfg, async () => {
    await Promise.all(kafkaClusterNodes(cfg).map((node) => releaseServer(node, keep, log, holder)));
  });
}

/** `npm run kafka-cluster:up`: started by hand, so test runs never stop it. */
export function kafkaClusterUpByHand(cfg: LocalServersConfig, log: LauncherLog): Promise<KafkaClusterUp> {
  return withClusterLock(cfg, () =>
    ensureCluster(cfg, log, (node) => upByHand(node, cfg.startTimeoutMs, log)),
  );
}

/** `npm run kafka-cluster:down`: stops every node, whatever holds leases. */
export function kafkaClusterDownByHand(cfg: LocalServersConfig, log: LauncherLog): Promise<void> {
  return withClusterLock(cfg, async () => {
    await Promise.all(kafkaClusterNodes(cfg).map((node) => downByHand(node, log)));
  });
}

/** CI clean-up: stops nodes a test run started and no live run holds; resolves with how many. */
export function tidyKafkaCluster(cfg: LocalServersConfig, log: LauncherLog): Promise<number> {
  return withClusterLock(cfg, async () => {
    const stopped = await Promise.all(kafkaClusterNodes(cfg).map((node) => tidyServer(node, log)));
    return stopped.filter(Boolean).length;
  });
}

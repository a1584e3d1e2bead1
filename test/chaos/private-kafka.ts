import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadLocalConfig, type LocalServersConfig } from '../../deploy/local/config.js';
import {
  acquireKafkaCluster,
  kafkaClusterDownByHand,
  kafkaClusterNodes,
  restartKafkaClusterNode,
} from '../../deploy/local/kafka-cluster-server.js';
import { kafkaServer } from '../../deploy/local/kafka-server.js';
import { stderrLog } from '../../deploy/local/log.js';
import { bringDown, bringUp, type ManagedServer } from '../../deploy/local/managed-server.js';
import { isAlive, readPidFile, type SpawnSpec } from '../../deploy/local/process-control.js';
import { freePort } from '../helpers/ports.js';

/**
 * A Kafka broker of the suite's own (deploy/local's launcher on free ports, so the shared 19092
 * broker other runs use is never touched). `restart` stops the process and starts it again on the
 * SAME storage — a broker restart, not a new cluster: topics and offsets survive.
 */
export interface PrivateKafka {
  readonly brokers: string[];
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export interface PrivateKafkaOptions {
  /**
   * Given the port the broker will listen on (127.0.0.1), the `host:port` it tells clients to
   * connect to instead, e.g. a fault proxy in front of it; `brokers` is then that address. Default:
   * the listener itself.
   */
  readonly advertise?: (listenPort: number) => Promise<string>;
}

export async function startPrivateKafka(options: PrivateKafkaOptions = {}): Promise<PrivateKafka> {
  const port = await freePort();
  let controllerPort = await freePort();
  while (controllerPort === port) controllerPort = await freePort();
  const cfg = loadLocalConfig({
    ...process.env,
    KAFKA_PORT: String(port),
    KAFKA_CONTROLLER_PORT: String(controllerPort),
    TOOLGATE_KAFKA_HEAP: process.env.TOOLGATE_KAFKA_HEAP ?? '512m',
  });
  const advertised = options.advertise === undefined ? undefined : await options.advertise(port);
  const fresh = kafkaServer(cfg);
  let spec: SpawnSpec | undefined;
  // The first start formats storage; later starts reuse the command and keep the data.
  const server: ManagedServer = {
    ...fresh,
    async prepare(log) {
      if (spec === undefined) {
        spec = await fresh.prepare(log);
        if (advertised !== undefined) advertise(join(fresh.runDir, 'server.properties'), advertised);
      }
      return spec;
    },
  };
  const start = async (): Promise<void> => {
    await bringUp(server, cfg.startTimeoutMs, stderrLog);
  };
  const stop = async (): Promise<void> => {
    await bringDown(server, stderrLog);
  };
  await start();
  return {
    brokers: [advertised ?? `${cfg.kafka.host}:${port}`],
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(fresh.runDir, { recursive: true, force: true });
    },
  };
}

function advertise(propertiesFile: string, address: string): void {
  const text = readFileSync(propertiesFile, 'utf8');
  writeFileSync(
    propertiesFile,
    text.replace(/^advertised\.listeners=.*$/m, `advertised.listeners=PLAINTEXT://${address}`),
  );
}

/**
 * A three-node Kafka cluster of the suite's own (deploy/local's cluster launcher, replication 3,
 * min.insync.replicas 2) on ports no shared server uses, so a scenario can kill a node without
 * disturbing the shared cluster other suites run on.
 */
export interface PrivateKafkaCluster {
  readonly brokers: string[];
  /** Node ids, 1-based, in the order of `brokers`. */
  readonly nodeIds: readonly number[];
  /** SIGKILLs node `nodeId` (no clean shutdown) and resolves once the process is gone. */
  kill(nodeId: number): Promise<void>;
  /** Starts node `nodeId` again on its storage; resolves once it answers. */
  restart(nodeId: number): Promise<void>;
  /** Stops every node and deletes the cluster's run directory. */
  destroy(): Promise<void>;
}

export async function startPrivateKafkaCluster(): Promise<PrivateKafkaCluster> {
  const base = loadLocalConfig();
  // Six ports (three clients', three controllers') in 23000–23899: clear of the shared servers and
  // of the private Redis Cluster's nodes (21000–21905) and bus ports (31000–31905).
  const firstPort = 23_000 + 10 * Math.floor(Math.random() * 90);
  const cfg: LocalServersConfig = { ...base, kafkaCluster: { ...base.kafkaCluster, firstPort } };
  const up = await acquireKafkaCluster(cfg, stderrLog);
  const nodes = kafkaClusterNodes(cfg);
  const node = (nodeId: number): ManagedServer => {
    const found = nodes[nodeId - 1];
    if (found === undefined) throw new RangeError(`the private cluster has no node ${nodeId}`);
    return found;
  };
  return {
    brokers: up.brokers,
    nodeIds: nodes.map((_, i) => i + 1),
    async kill(nodeId) {
      const pid = readPidFile(node(nodeId).pidFile);
      if (pid === undefined) throw new Error(`node ${nodeId} of the private cluster is not running`);
      process.kill(pid, 'SIGKILL');
      while (isAlive(pid)) await new Promise((r) => setTimeout(r, 20));
    },
    restart: (nodeId) => restartKafkaClusterNode(cfg, nodeId, stderrLog),
    async destroy() {
      await kafkaClusterDownByHand(cfg, stderrLog);
      rmSync(join(cfg.cacheDir, 'run', `kafka-cluster-${firstPort}`), { recursive: true, force: true });
    },
  };
}

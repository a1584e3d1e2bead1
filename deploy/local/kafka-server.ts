import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { KafkaSettings, LocalServersConfig } from './config.js';
import { kafkaBootstrap } from './config.js';
import { findJava } from './java-runtime.js';
import { ensureKafkaLibs } from './kafka-install.js';
import { renderLog4j2Properties, renderServerProperties, type KafkaClusterNode } from './kafka-files.js';
import { kafkaAnswers, kafkaBrokerCount } from './kafka-probe.js';
import { warmUpKafka } from './kafka-warmup.js';
import type { LauncherLog } from './log.js';
import type { ManagedServer, UpResult } from './managed-server.js';
import { acquireServer, releaseServer } from './shared-server.js';

const run = promisify(execFile);

/** One KRaft node the launchers run: where it listens and keeps its files, and how it is formatted. */
export interface KafkaNodeSpec {
  /** For messages: "kafka", "kafka cluster node 1". */
  readonly name: string;
  readonly port: number;
  readonly controllerPort: number;
  readonly runDir: string;
  readonly heap: string;
  /** The cluster id to format fresh storage with; called once per fresh start. */
  clusterId(): string;
  /** For a node of a multi-node cluster: its id, the voters and the replication settings. */
  readonly cluster?: KafkaClusterNode;
  /**
   * Every node of the node's cluster: the node counts as up once the cluster lists each of them as
   * an alive broker, not only once it listens, so topics created next are placed on all of them.
   * Default: the node itself answers.
   */
  readonly answerWith?: readonly string[];
  /**
   * Start on the storage an earlier start formatted (a restart after a stop or a kill): nothing is
   * deleted or formatted, the node keeps its id, log and offsets, and no warm-up runs (the internal
   * topics exist). Rejects when there is no formatted storage to start on.
   */
  readonly keepStorage?: boolean;
}

/**
 * A KRaft node (broker+controller) as a {@link ManagedServer}. Each fresh start formats empty
 * storage with `spec.clusterId()`, so a run never sees topics from an earlier one; with
 * `spec.keepStorage` it starts on the storage it has.
 */
export function kafkaNode(cfg: LocalServersConfig, spec: KafkaNodeSpec): ManagedServer {
  const k: KafkaSettings = {
    ...cfg.kafka,
    port: spec.port,
    controllerPort: spec.controllerPort,
    heap: spec.heap,
  };
  const runDir = spec.runDir;
  const address = kafkaBootstrap(k);
  const marker = `-Dtoolgate.server=kafka-${spec.port}`;
  return {
    name: spec.name,
    marker,
    runDir,
    pidFile: join(runDir, 'kafka.pid'),
    logFile: join(runDir, 'stdout.log'),
    address,
    host: k.host,
    ports: [k.port, k.controllerPort],
    portVariables:
      spec.cluster === undefined ? ['KAFKA_PORT', 'KAFKA_CONTROLLER_PORT'] : ['TOOLGATE_KAFKA_CLUSTER_PORT'],
    answers: async () =>
      spec.answerWith === undefined
        ? kafkaAnswers([address])
        : (await kafkaBrokerCount(spec.answerWith)) >= spec.answerWith.length,
    ...(spec.keepStorage === true ? {} : { warmUp: () => warmUpKafka(spec.answerWith ?? [address]) }),
    async prepare(log) {
      const libs = await ensureKafkaLibs(cfg.cacheDir, cfg.mavenCommand, k, log);
      const java = findJava(k.minJava, cfg.javaHome);
      const dataDir = join(runDir, 'data');
      const props = join(runDir, 'server.properties');
      const log4j = join(runDir, 'log4j2.properties');
      const classpath = `${libs}/*`;
      if (spec.keepStorage === true) {
        if (!existsSync(join(dataDir, 'meta.properties')))
          throw new Error(`${spec.name}: no formatted storage in ${dataDir} to start on again`);
        log(`${spec.name} ${k.version}: starting again on its storage in ${dataDir}`);
      } else {
        rmSync(dataDir, { recursive: true, force: true });
        mkdirSync(dataDir, { recursive: true });
        writeFileSync(props, renderServerProperties(k, dataDir, spec.cluster));
        writeFileSync(log4j, renderLog4j2Properties(join(runDir, 'server.log')));
        const clusterId = spec.clusterId();
        await run(
          java.bin,
          ['-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', props],
          { cwd: runDir },
        );
        log(
          `${spec.name} ${k.version}: storage formatted in ${dataDir} (cluster ${clusterId}, java ${java.major})`,
        );
      }
      rmSync(join(runDir, 'stdout.log'), { force: true });
      return {
        command: java.bin,
        args: [
          `-Xmx${k.heap}`,
          '-Xms128m',
          '-XX:+UseG1GC',
          '-XX:MaxGCPauseMillis=20',
          '-XX:+ExitOnOutOfMemoryError',
          '-Djava.awt.headless=true',
          `-Dlog4j2.configurationFile=${log4j}`,
          `-Dkafka.logs.dir=${runDir}`,
          marker,
          '-cp',
          classpath,
          'kafka.Kafka',
          props,
        ],
        cwd: runDir,
        logFile: join(runDir, 'stdout.log'),
      };
    },
  };
}

/**
 * The local Kafka broker as a {@link ManagedServer}: one KRaft node (broker+controller) on
 * 127.0.0.1, run directory `<cacheDir>/run/kafka-<port>`, a new cluster id per fresh start.
 */
export function kafkaServer(cfg: LocalServersConfig): ManagedServer {
  const k = cfg.kafka;
  return kafkaNode(cfg, {
    name: 'kafka',
    port: k.port,
    controllerPort: k.controllerPort,
    runDir: join(cfg.cacheDir, 'run', `kafka-${k.port}`),
    heap: k.heap,
    clusterId: newClusterId,
  });
}

/**
 * For test runs: ensures the local broker runs (starting it, or reusing one that answers) and takes
 * a lease on it; resolves with the bootstrap address. First use fetches the jars with Maven.
 */
export async function acquireKafka(
  cfg: LocalServersConfig,
  log: LauncherLog,
): Promise<UpResult & { readonly brokers: string[] }> {
  const result = await acquireServer(kafkaServer(cfg), cfg.startTimeoutMs, log);
  return { ...result, brokers: [kafkaBootstrap(cfg.kafka)] };
}

/**
 * Drops this process's lease; stops the broker when it was the last one, a test run started the
 * broker, and `keep` is false. Resolves with whether it stopped it.
 */
export function releaseKafka(cfg: LocalServersConfig, keep: boolean, log: LauncherLog): Promise<boolean> {
  return releaseServer(kafkaServer(cfg), keep, log);
}

/**
 * A Kafka cluster id: 16 random bytes in URL-safe base64 without padding, never starting with '-'
 * (StorageTool would read such an id as an option and refuse to format — about 1 start in 64;
 * Kafka's own Uuid.randomUuid draws again for the same reason).
 */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

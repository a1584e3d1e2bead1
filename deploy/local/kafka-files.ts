import type { KafkaSettings } from './config.js';

/** One node of a multi-node KRaft cluster, for {@link renderServerProperties}. */
export interface KafkaClusterNode {
  readonly nodeId: number;
  /** `id@host:controllerPort` of every voter, comma-separated. */
  readonly voters: string;
  /** For the internal topics and the default of new topics. */
  readonly replicationFactor: number;
  readonly minInsyncReplicas: number;
}

/**
 * server.properties for one combined broker+controller (KRaft) on loopback: a single node, or with
 * `cluster` one node of a cluster whose voters it names (replication as the cluster says; a single
 * node's replication factors are 1); the initial rebalance delay is 0 so a test's consumer joins at
 * once. Topics are not auto-created: a test names and creates its own (test/helpers/kafka.ts), and a
 * typo then fails loudly instead of producing into a fresh, unread topic.
 */
export function renderServerProperties(
  k: KafkaSettings,
  dataDir: string,
  cluster?: KafkaClusterNode,
): string {
  const replicas = cluster?.replicationFactor ?? 1;
  const minIsr = cluster?.minInsyncReplicas ?? 1;
  const lines: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': cluster?.nodeId ?? 1,
    'controller.quorum.voters': cluster?.voters ?? `1@${k.host}:${k.controllerPort}`,
    listeners: `PLAINTEXT://${k.host}:${k.port},CONTROLLER://${k.host}:${k.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://${k.host}:${k.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': dataDir,
    'num.partitions': 1,
    'auto.create.topics.enable': false,
    'delete.topic.enable': true,
    'offsets.topic.replication.factor': replicas,
    'offsets.topic.num.partitions': 10,
    'transaction.state.log.replication.factor': replicas,
    'transaction.state.log.min.isr': minIsr,
    'share.coordinator.state.topic.replication.factor': replicas,
    'share.coordinator.state.topic.min.isr': minIsr,
    'default.replication.factor': replicas,
    'min.insync.replicas': minIsr,
    'group.initial.rebalance.delay.ms': 0,
    'num.network.threads': 2,
    'num.io.threads': 4,
    'log.retention.hours': 24,
    'log.segment.bytes': 16 * 1024 * 1024,
  };
  return `${Object.entries(lines)
    .map(([key, value]) => `${key}=${String(value)}`)
    .join('\n')}\n`;
}

/**
 * Log4j 2 configuration: everything at INFO into `logFile` (overwritten per start), errors also to
 * the console, which the launcher captures, so a failed start shows its cause.
 */
export function renderLog4j2Properties(logFile: string): string {
  return `status = warn
name = toolgate-local-kafka

appender.file.type = File
appender.file.name = FILE
appender.file.fileName = ${logFile}
appender.file.append = false
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n

appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = error

rootLogger.level = info
rootLogger.appenderRef.file.ref = FILE
rootLogger.appenderRef.console.ref = STDOUT

# The request logger is very verbose at INFO and DEBUG.
logger.request.name = kafka.request.logger
logger.request.level = warn
`;
}

import type { KafkaSettings } from './config.js';

/**
 * server.properties for one combined broker+controller (KRaft) on loopback. Replication factors
 * are 1 because there is one node; the initial rebalance delay is 0 so a test's consumer joins at
 * once. Topics are not auto-created: a test names and creates its own (test/helpers/kafka.ts), and a
 * typo then fails loudly instead of producing into a fresh, unread topic.
 */
export function renderServerProperties(k: KafkaSettings, dataDir: string): string {
  const lines: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': 1,
    'controller.quorum.voters': `1@${k.host}:${k.controllerPort}`,
    listeners: `PLAINTEXT://${k.host}:${k.port},CONTROLLER://${k.host}:${k.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://${k.host}:${k.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': dataDir,
    'num.partitions': 1,
    'auto.create.topics.enable': false,
    'delete.topic.enable': true,
    'offsets.topic.replication.factor': 1,
    'offsets.topic.num.partitions': 10,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'share.coordinator.state.topic.replication.factor': 1,
    'share.coordinator.state.topic.min.isr': 1,
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

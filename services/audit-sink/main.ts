import pg from 'pg';
import { pino } from 'pino';
import { PostgresAuditStore } from '../../libs/adapters/postgres/audit-store.js';
import { migrate } from '../../libs/adapters/postgres/migrate.js';
import { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import { systemClock } from '../../libs/core/system-clock.js';
import { RegistryEventCodec } from '../../libs/events/registry-codec.js';
import { topicNames } from '../../libs/events/topics.js';
import { retryStartupStep } from '../executor/startup-retry.js';
import { createAuditSink, type AuditSink } from './audit-sink.js';
import { AuditSinkConfigError, loadAuditSinkConfig } from './config.js';

/**
 * The audit-sink process: Kafka (audit topic in, dead letters out), the schema registry, and the
 * Postgres audit store (migrated at start). SIGTERM or SIGINT drains it: running batches finish or
 * give up their wait, stored batches commit, the member leaves; then connections close and it exits
 * 0. A failed start exits 1. Run with `npx tsx services/audit-sink/main.ts`.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadAuditSinkConfig();
  } catch (err) {
    process.stderr.write(`${err instanceof AuditSinkConfigError ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const logger = pino({ level: config.logLevel, base: { service: 'audit-sink', sinkId: config.sinkId } });
  const topics = topicNames(config.topicPrefix);
  const closers: Array<[string, () => Promise<unknown>]> = [];
  const closeAll = async (): Promise<void> => {
    for (const [name, close] of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        logger.warn({ err, resource: name }, 'close failed');
      }
    }
  };

  let sink: AuditSink | undefined;
  let shuttingDown: Promise<void> | undefined;
  const shutdown = (signal: string): Promise<void> => {
    shuttingDown ??= (async () => {
      logger.info({ signal }, 'stopping');
      await sink?.stop();
      await closeAll();
      logger.info('stopped');
    })();
    return shuttingDown;
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void shutdown(signal));

  try {
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.databasePoolMax });
    closers.push(['postgres', () => pool.end()]);
    const migrated = await migrate(pool);
    if (migrated.applied.length > 0) logger.info({ applied: migrated.applied }, 'migrations applied');

    const bus = new KafkaEventBus({
      brokers: config.kafkaBrokers,
      clientId: config.sinkId,
      logger: logger.child({ component: 'bus' }),
      sessionTimeoutMs: config.kafka.sessionTimeoutMs,
      rebalanceTimeoutMs: config.kafka.rebalanceTimeoutMs,
      heartbeatIntervalMs: config.kafka.heartbeatMs,
    });
    closers.push(['kafka', () => bus.close()]);
    // Fresh topics and a booting registry answer transiently wrong for a moment (see retryStartupStep).
    const retryDeps = { clock: systemClock, logger };
    await retryStartupStep(
      'ensure topics',
      () =>
        bus.ensureTopics([
          { topic: topics.audit, partitions: config.partitions.audit },
          { topic: topics.dlq, partitions: config.partitions.dlq },
        ]),
      retryDeps,
    );
    const codec = await retryStartupStep(
      'register schemas',
      () => RegistryEventCodec.create({ url: config.schemaRegistryUrl, topics }),
      retryDeps,
    );

    sink = createAuditSink({
      subscriber: bus,
      publisher: bus,
      codec,
      topics,
      store: new PostgresAuditStore(pool, { chainConcurrency: config.chainConcurrency }),
      logger: logger.child({ component: 'audit-sink' }),
      groupId: config.groupId,
      producerId: config.sinkId,
      clock: systemClock,
      partitionsConcurrently: config.partitionsConcurrently,
    });
    if (shuttingDown === undefined) await sink.start();
    // A signal that arrived during start-up stops the sink now that it can.
    if (shuttingDown !== undefined) await shutdown('start-up interrupted');
  } catch (err) {
    logger.error({ err }, 'audit sink failed to start');
    process.exitCode = 1;
    await closeAll();
  }
}

await main();

import { Kafka, logLevel, type Admin } from 'kafkajs';
import { Registry } from 'prom-client';
import type { TopicNames } from '../../../libs/events/topics.js';
import { kafkaConsumerLag, type PartitionLag } from '../../../libs/observability/consumer-lag.js';
import { startHealthServer, type HealthServer } from '../../../libs/observability/health-server.js';
import { createToolgateMetrics } from '../../../libs/observability/metrics.js';
import { postgresCaseCounts } from '../../../libs/observability/postgres-case-counts.js';
import { kafkaBrokers } from '../../helpers/env.js';
import type { TestSchema } from '../../helpers/postgres.js';
import type { ServiceProcess } from './service-process.js';

/** A running stand-in endpoint and how to stop it. */
export interface StandIn {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * When the audit sink and the reconciler serve no /metrics yet, reports in their place what they are
 * meant to: reconciliation cases per unfinished state (`postgresCaseCounts` on the run's schema, the
 * reconciler's source) and the lag of the audit-sink and reconciler groups (`kafkaConsumerLag`).
 * Resolves undefined, and starts nothing, when every given service serves its own /metrics.
 * Prints which path the run took, so a report says whether the services' own endpoints were scraped.
 */
export async function standInMetrics(
  db: TestSchema,
  prefix: string,
  topics: TopicNames,
  services: readonly ServiceProcess[],
): Promise<StandIn | undefined> {
  const silent: string[] = [];
  for (const s of services) if (!(await s.servesMetrics())) silent.push(s.name);
  if (silent.length === 0) return undefined;
  process.stderr.write(
    `[ops] no /metrics from ${silent.join(', ')}: a stand-in reports their cases and lag\n`,
  );
  const admin: Admin = new Kafka({
    clientId: `${prefix}-stand-in`,
    brokers: kafkaBrokers(),
    logLevel: logLevel.ERROR,
  }).admin();
  await admin.connect();
  const sinkLag = kafkaConsumerLag({ admin, groupId: `${prefix}-audit-sink`, topics: [topics.audit] });
  const reconcilerLag = kafkaConsumerLag({ admin, groupId: `${prefix}-reconcilers`, topics: [topics.dlq] });
  const registry = new Registry();
  createToolgateMetrics(registry, {
    isKnownTool: () => false,
    caseCounts: postgresCaseCounts(db.pool),
    consumerLag: async (): Promise<PartitionLag[]> => [...(await sinkLag()), ...(await reconcilerLag())],
  });
  const server: HealthServer = await startHealthServer({
    port: 0,
    host: '127.0.0.1',
    registry,
    readiness: () => Promise.resolve({ ready: true, checks: {} }),
  });
  return {
    port: server.port,
    async close() {
      await server.close();
      await admin.disconnect();
    },
  };
}

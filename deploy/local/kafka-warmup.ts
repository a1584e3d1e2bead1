import { Kafka, logLevel } from 'kafkajs';

/**
 * Makes a fresh broker create its internal topics now: a group-coordinator lookup creates
 * __consumer_offsets, an idempotent producer's InitProducerId starts the transaction coordinator.
 * Without this the first test to use a group or an idempotent producer waits on "coordinator is
 * loading" retries and floods its output with kafkajs errors. kafkajs retries inside; silent.
 */
export async function warmUpKafka(brokers: readonly string[]): Promise<void> {
  const kafka = new Kafka({
    clientId: 'toolgate-local-warmup',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 200 },
  });
  const admin = kafka.admin();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  try {
    await admin.connect();
    await admin.describeGroups(['toolgate-local-warmup']);
    await producer.connect();
  } finally {
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}

import { Kafka, logLevel } from 'kafkajs';

/**
 * True when a broker at `brokers` answers an admin DescribeCluster with at least one broker and
 * an active controller. One attempt, short timeouts, silent: meant to be polled.
 */
export async function kafkaAnswers(brokers: readonly string[]): Promise<boolean> {
  const kafka = new Kafka({
    clientId: 'toolgate-local-probe',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 3000,
    retry: { retries: 0 },
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length > 0 && cluster.controller !== null && cluster.controller >= 0;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

import { Kafka, logLevel, type Admin } from 'kafkajs';

/**
 * True when a broker at `brokers` answers an admin DescribeCluster with at least one broker and
 * an active controller. One attempt, short timeouts, silent: meant to be polled.
 */
export function kafkaAnswers(brokers: readonly string[]): Promise<boolean> {
  return probe(
    brokers,
    async (admin) => {
      const cluster = await admin.describeCluster();
      return cluster.brokers.length > 0 && cluster.controller !== null && cluster.controller >= 0;
    },
    false,
  );
}

/**
 * How many brokers the cluster at `brokers` lists as alive (registered and unfenced), or 0 when it
 * does not answer. A node that listens is not yet a broker the controller places partitions on: a
 * topic created before every node is listed takes its leaders and replicas from the others. One
 * attempt, short timeouts, silent: meant to be polled.
 */
export function kafkaBrokerCount(brokers: readonly string[]): Promise<number> {
  return probe(brokers, async (admin) => (await admin.describeCluster()).brokers.length, 0);
}

/** Runs `ask` on a throwaway admin client with short timeouts and no retries; `failed` on any error. */
async function probe<T>(
  brokers: readonly string[],
  ask: (admin: Admin) => Promise<T>,
  failed: T,
): Promise<T> {
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
    return await ask(admin);
  } catch {
    return failed;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

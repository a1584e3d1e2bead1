import kafkajs from 'kafkajs';
import { afterAll } from 'vitest';
import { DATABASE_URL } from '../../helpers/env.js';
import { createTestKafka, type TestKafka } from '../../helpers/kafka.js';

/** DATABASE_URL pointed at one test schema (pg reads `options` from the URL), as an operator would. */
export function databaseUrlFor(schema: string): string {
  const url = new URL(DATABASE_URL);
  url.searchParams.set('options', `-c search_path="${schema}"`);
  return url.href;
}

/**
 * A Kafka client `name` for a test file of the `topics` commands, and the list its tests push the
 * topics they make onto. Registers an `afterAll` hook that deletes the listed topics and closes the
 * client.
 */
export function topicsTestKafka(name: string): { readonly kafka: TestKafka; readonly created: string[] } {
  const kafka = createTestKafka(name);
  const created: string[] = [];
  afterAll(async () => {
    const admin = await kafka.admin();
    const mine = created.splice(0);
    if (mine.length > 0) await admin.deleteTopics({ topics: mine, timeout: 10_000 });
    await kafka.close();
  });
  return { kafka, created };
}

/** The broker's value of the config `configName` of `topic` (synonyms left out), if it names one. */
export async function topicConfig(
  kafka: TestKafka,
  topic: string,
  configName: string,
): Promise<string | undefined> {
  const { resources } = await (
    await kafka.admin()
  ).describeConfigs({
    includeSynonyms: false,
    resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic, configNames: [configName] }],
  });
  return resources[0]?.configEntries.find((e) => e.configName === configName)?.configValue;
}

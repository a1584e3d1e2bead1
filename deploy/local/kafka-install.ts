import { join } from 'node:path';
import { ensureCacheDir } from './cache-dir.js';
import type { KafkaSettings } from './config.js';
import type { LauncherLog } from './log.js';
import { copyRuntimeClosure } from './maven-fetch.js';

/**
 * Ensures the Kafka broker's jars are in `<cacheDir>/kafka-<version>/libs` and returns that folder.
 * kafka_2.13's POM brings the broker, the clients and Log4j 2 core; it leaves out an SLF4J binding
 * (the distribution adds one), so log4j-slf4j-impl is added here or every broker log line is lost.
 */
export async function ensureKafkaLibs(
  cacheDir: string,
  mvn: string,
  kafka: KafkaSettings,
  log: LauncherLog,
): Promise<string> {
  const dir = join(cacheDir, `kafka-${kafka.version}`);
  await ensureCacheDir(
    dir,
    `kafka ${kafka.version} jars`,
    async (tmp) => {
      await copyRuntimeClosure(mvn, tmp, [
        { groupId: 'org.apache.kafka', artifactId: 'kafka_2.13', version: kafka.version },
        { groupId: 'org.apache.logging.log4j', artifactId: 'log4j-slf4j-impl', version: kafka.log4jVersion },
      ]);
    },
    log,
  );
  return join(dir, 'libs');
}

import { randomBytes } from 'node:crypto';

/**
 * A name no other test run will use: `<prefix>_<12 hex>`. Lowercase, [a-z0-9_] only, so it is valid
 * as a Postgres schema, a Kafka topic or group, and a Redis key prefix.
 */
export function uniqueName(prefix: string): string {
  const clean = prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  return `${clean}_${randomBytes(6).toString('hex')}`;
}

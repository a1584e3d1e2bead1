import { Kafka, logLevel } from 'kafkajs';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { DemoConfig } from './config.js';

const CHECK_TIMEOUT_MS = 4_000;

/** Thrown when a server the kafka mode needs does not answer; the message says how to start it. */
export class ServerUnavailableError extends Error {
  override readonly name = 'ServerUnavailableError';
}

/**
 * Checks, in parallel and each within a few seconds, that Kafka, the schema registry, Redis and
 * Postgres answer. Rejects with one {@link ServerUnavailableError} listing every server that did
 * not, and how to start it.
 */
export async function checkServers(servers: DemoConfig['servers']): Promise<void> {
  const checks: Array<[string, string, () => Promise<unknown>]> = [
    [
      `Kafka at ${servers.kafkaBrokers.join(',')}`,
      'npm run kafka:up (or npm run servers:up)',
      () => checkKafka(servers.kafkaBrokers),
    ],
    [
      `the schema registry at ${servers.schemaRegistryUrl}`,
      'npm run registry:up (or npm run servers:up)',
      () => checkRegistry(servers.schemaRegistryUrl),
    ],
    [
      `Redis at ${servers.redisUrl}`,
      'start redis-server (or docker compose up redis)',
      () => checkRedis(servers.redisUrl),
    ],
    [
      `Postgres at ${redactUrl(servers.databaseUrl)}`,
      'start PostgreSQL (or docker compose up postgres)',
      () => checkPostgres(servers.databaseUrl),
    ],
  ];
  const results = await Promise.allSettled(checks.map(([, , check]) => check()));
  const missing = results.flatMap((r, i) =>
    r.status === 'rejected' ? [`  - ${checks[i]![0]} did not answer; start it with: ${checks[i]![1]}`] : [],
  );
  if (missing.length > 0) {
    throw new ServerUnavailableError(
      `The kafka demo needs real servers, and some are not reachable:\n${missing.join('\n')}\n` +
        'Or run the same story without servers: npm run demo',
    );
  }
}

async function checkKafka(brokers: readonly string[]): Promise<void> {
  const admin = new Kafka({
    clientId: 'toolgate-demo-check',
    brokers: [...brokers],
    connectionTimeout: CHECK_TIMEOUT_MS,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
  }).admin();
  try {
    await withTimeout(admin.connect().then(() => admin.listTopics()));
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

async function checkRegistry(url: string): Promise<void> {
  const response = await fetch(`${url.replace(/\/$/, '')}/subjects`, {
    signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
}

async function checkRedis(url: string): Promise<void> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: CHECK_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await withTimeout(redis.connect().then(() => redis.ping()));
  } finally {
    redis.disconnect();
  }
}

async function checkPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CHECK_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

function withTimeout<T>(work: Promise<T>): Promise<T> {
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      setTimeout(() => reject(new Error('no answer')), CHECK_TIMEOUT_MS).unref();
    }),
  ]);
}

/** A connection URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

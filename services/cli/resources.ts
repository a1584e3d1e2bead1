import type { Cluster, Redis } from 'ioredis';
import { connectRedis } from '../../libs/adapters/redis/connect.js';
import { RedisIdempotencyStore } from '../../libs/adapters/redis/redis-idempotency-store.js';
import { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import { RegistryEventCodec } from '../../libs/events/registry-codec.js';
import type { TopicNames } from '../../libs/events/topics.js';
import type { EventPublisher } from '../../libs/ports/event-bus.js';
import type { EventCodec } from '../../libs/events/event-codec.js';
import type { IdempotencyStore } from '../../libs/ports/idempotency-store.js';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import pg from 'pg';
import { PostgresAuditStore } from '../../libs/adapters/postgres/audit-store.js';
import { PostgresCaseStore } from '../../libs/adapters/postgres/case-store.js';
import { systemClock } from '../../libs/core/system-clock.js';
import type { AuditStore } from '../../libs/ports/audit-store.js';
import type { CaseStore } from '../../libs/ports/case-store.js';
import type { Clock } from '../../libs/core/clock.js';
import type { Catalog } from '../../libs/catalog/catalog.js';
import { loadCatalogFactory } from '../../libs/runtime/catalog-module.js';
import type { Args } from './args.js';
import { UnreachableError } from './cli-error.js';
import { describe, isUnreachable } from './classify-error.js';
import { redactUrl, type CliConfig } from './config.js';
import type { CliIo } from './io.js';

/** How long to wait for a server to accept a connection before reporting it unreachable (exit 3). */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The servers one command talks to, opened on first use and closed by {@link Resources.close}: a
 * command that never asks for Kafka never connects to it. Each connection is proved (a round trip)
 * when opened, so "cannot reach X" is reported as exit 3 before any work starts.
 */
export class Resources {
  private pgPool: Promise<pg.Pool> | undefined;
  private admin: Promise<Admin> | undefined;
  private redisClient: Promise<Redis | Cluster> | undefined;
  private readonly closers: (() => Promise<unknown>)[] = [];

  constructor(
    private readonly config: CliConfig,
    private readonly args: Args,
    private readonly io: CliIo,
  ) {}

  /** The clock cases are stamped with. */
  get clock(): Clock {
    return this.io.clock ?? systemClock;
  }

  /** The database URL (flag, else DATABASE_URL). Throws UsageError when neither is given. */
  databaseUrl(): string {
    return this.config.require('DATABASE_URL', this.args.command, this.flag('database-url'));
  }

  /** A small pool on the database, proved with `SELECT 1`. */
  pool(): Promise<pg.Pool> {
    this.pgPool ??= (async () => {
      const url = this.databaseUrl();
      const pool = new pg.Pool({
        connectionString: url,
        max: 4,
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        application_name: 'toolgate-cli',
      });
      // An idle client losing its server must not crash the CLI; the next query reports it.
      pool.on('error', () => undefined);
      this.closers.push(() => pool.end());
      try {
        await pool.query('SELECT 1');
      } catch (err) {
        throw new UnreachableError('postgres', `cannot connect to ${redactUrl(url)}: ${describe(err)}`, {
          cause: err,
        });
      }
      return pool;
    })();
    return this.pgPool;
  }

  /** The audit store: the one given in `io.stores`, else the Postgres one. */
  async auditStore(): Promise<AuditStore> {
    return this.io.stores?.audit ?? new PostgresAuditStore(await this.pool());
  }

  /** The case store: the one given in `io.stores`, else the Postgres one. */
  async caseStore(): Promise<CaseStore> {
    return this.io.stores?.cases ?? new PostgresCaseStore(await this.pool(), this.clock);
  }

  /**
   * The tool catalog, built the way the executor builds it: the factory exported by a catalog module
   * (`--catalog`, else TOOLGATE_CATALOG_MODULE, both relative to the working directory; else the
   * store catalog), given the clock and the database pool on demand. Closed by {@link close}.
   * `io.catalog`, when given, is used as it is.
   */
  async catalog(): Promise<Catalog> {
    if (this.io.catalog !== undefined) return this.io.catalog;
    const flag = this.args.string('catalog');
    const fromEnv = this.config.get('TOOLGATE_CATALOG_MODULE', this.args.command);
    const factory = await loadCatalogFactory(flag ?? fromEnv, this.io.cwd ?? process.cwd());
    const catalog = await factory({ postgres: () => this.pool(), clock: this.clock });
    if (catalog.close !== undefined) this.closers.push(() => catalog.close!());
    return catalog;
  }

  /** The Kafka brokers (flag, else KAFKA_BROKERS). Throws UsageError when neither is given. */
  brokers(): readonly string[] {
    return this.config.require('KAFKA_BROKERS', this.args.command, this.flag('brokers'));
  }

  /** A connected kafkajs admin client; few retries, so an absent broker is reported within seconds. */
  kafkaAdmin(): Promise<Admin> {
    this.admin ??= (async () => {
      const brokers = this.brokers();
      const kafka = new Kafka({
        clientId: 'toolgate-cli',
        brokers: [...brokers],
        logLevel: logLevel.NOTHING,
        connectionTimeout: CONNECT_TIMEOUT_MS,
        retry: { retries: 2, initialRetryTime: 300 },
      });
      const admin = kafka.admin();
      try {
        await admin.connect();
      } catch (err) {
        await admin.disconnect().catch(() => undefined);
        throw new UnreachableError(
          'kafka',
          `cannot connect to Kafka at ${brokers.join(',')}: ${describe(err)}`,
          {
            cause: err,
          },
        );
      }
      this.closers.push(() => admin.disconnect());
      return admin;
    })();
    return this.admin;
  }

  /** The schema registry base URL (flag, else SCHEMA_REGISTRY_URL). Throws UsageError when absent. */
  schemaRegistryUrl(): string {
    return this.config.require('SCHEMA_REGISTRY_URL', this.args.command, this.flag('schema-registry-url'));
  }

  /** A connected Redis client (no reconnect loop: an absent server fails the command at once). */
  redis(): Promise<Redis | Cluster> {
    this.redisClient ??= (async () => {
      const url = this.config.require('REDIS_URL', this.args.command, this.flag('redis-url'));
      const redis = connectRedis(url, {
        lazyConnect: true,
        connectTimeout: CONNECT_TIMEOUT_MS,
        maxRetriesPerRequest: 1,
        retryStrategy: () => null,
      });
      redis.on('error', () => undefined);
      try {
        await redis.connect();
      } catch (err) {
        redis.disconnect();
        throw new UnreachableError('redis', `cannot connect to ${redactUrl(url)}: ${describe(err)}`, {
          cause: err,
        });
      }
      this.closers.push(() => redis.quit());
      return redis;
    })();
    return this.redisClient;
  }

  /**
   * A publisher on the brokers: a KafkaEventBus (idempotent producer), connected after the admin
   * client has proved the brokers reachable, so an absent broker fails fast with exit 3.
   */
  async publisher(): Promise<EventPublisher> {
    await this.kafkaAdmin();
    const bus = new KafkaEventBus({ brokers: this.brokers(), clientId: 'toolgate-cli' });
    this.closers.push(() => bus.close());
    await bus.connect();
    return bus;
  }

  /**
   * The production event codec on the schema registry. Creating it registers this build's schemas
   * under `topics` (idempotent; the services do the same on start).
   */
  async codec(topics: TopicNames): Promise<EventCodec> {
    const url = this.schemaRegistryUrl();
    try {
      return await RegistryEventCodec.create({ url, topics });
    } catch (err) {
      if (!isUnreachable(err)) throw err;
      throw new UnreachableError(
        'schema-registry',
        `cannot reach the schema registry at ${url}: ${describe(err)}`,
        {
          cause: err,
        },
      );
    }
  }

  /** The executors' idempotency store on Redis, under REDIS_KEY_PREFIX (default `toolgate:`). */
  async idempotencyStore(): Promise<IdempotencyStore> {
    const keyPrefix = this.config.get('REDIS_KEY_PREFIX', this.args.command) ?? 'toolgate:';
    return new RedisIdempotencyStore(await this.redis(), { keyPrefix });
  }

  /** Closes whatever was opened, newest first; never throws. */
  async close(): Promise<void> {
    for (const close of this.closers.splice(0).reverse()) await close().catch(() => undefined);
  }

  private flag(name: string): { flag: string; value: string | undefined } {
    return { flag: name, value: this.args.string(name) };
  }
}

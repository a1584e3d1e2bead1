import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

/** Broker port of the local Kafka launcher and of docker-compose.yml (env KAFKA_PORT). */
export const DEFAULT_KAFKA_PORT = 19092;
/** KRaft controller port of the local Kafka launcher and of docker-compose.yml (env KAFKA_CONTROLLER_PORT). */
export const DEFAULT_KAFKA_CONTROLLER_PORT = 19093;
/** HTTP port of the local schema registry and of docker-compose.yml (env SCHEMA_REGISTRY_PORT). */
export const DEFAULT_SCHEMA_REGISTRY_PORT = 18081;
/** Ports of the servers this machine already runs; docker-compose.yml publishes the same ones. */
export const DEFAULT_POSTGRES_PORT = 5432;
export const DEFAULT_REDIS_PORT = 6379;
/** First broker port of the local Kafka cluster (env TOOLGATE_KAFKA_CLUSTER_PORT): brokers on it and the next two, controllers on the three after. */
export const DEFAULT_KAFKA_CLUSTER_PORT = 29092;
/** First node port of the local Redis Cluster (env TOOLGATE_REDIS_CLUSTER_PORT); the nodes take the next ones. */
export const DEFAULT_REDIS_CLUSTER_PORT = 17001;

/** Apache Kafka release the launcher resolves from Maven Central (Scala 2.13 build). */
export const KAFKA_VERSION = '4.1.1';
/** Log4j 2 release matching the one Kafka 4.1's POMs declare; only the SLF4J binding is added. */
export const LOG4J_VERSION = '2.24.3';
/** Apicurio Registry release whose `all` archive (a Quarkus fast-jar) the launcher unpacks. */
export const APICURIO_VERSION = '3.3.3';
/** Keycloak release whose Quarkus distribution (keycloak-quarkus-dist, zip) the launcher unpacks. */
export const KEYCLOAK_VERSION = '26.7.3';
/** HTTP port of the local Keycloak (env TOOLGATE_KEYCLOAK_PORT). */
export const DEFAULT_KEYCLOAK_PORT = 18180;
/** Path of the Confluent-compatible API under the registry's root. */
export const CCOMPAT_PATH = '/apis/ccompat/v7';

const port = z.coerce.number().int().min(1).max(65535);

const EnvSchema = z.object({
  KAFKA_PORT: port.default(DEFAULT_KAFKA_PORT),
  KAFKA_CONTROLLER_PORT: port.default(DEFAULT_KAFKA_CONTROLLER_PORT),
  SCHEMA_REGISTRY_PORT: port.default(DEFAULT_SCHEMA_REGISTRY_PORT),
  TOOLGATE_KAFKA_CLUSTER_PORT: z.coerce.number().int().min(1).max(65_529).default(DEFAULT_KAFKA_CLUSTER_PORT),
  TOOLGATE_KAFKA_CLUSTER_HEAP: z
    .string()
    .regex(/^\d+[mg]$/)
    .default('384m'),
  /** The cluster's six nodes listen on this port and the five after it (bus ports 10,000 higher). */
  TOOLGATE_REDIS_CLUSTER_PORT: z.coerce.number().int().min(1).max(55_529).default(DEFAULT_REDIS_CLUSTER_PORT),
  /** Where fetched distributions and run directories live; outside the repo so clones share them. */
  TOOLGATE_CACHE_DIR: z.string().min(1).optional(),
  /** A JDK to try first; the launchers still check its version and fall back to /usr/lib/jvm. */
  JAVA_HOME: z.string().min(1).optional(),
  /** The Maven command (a path or a name on PATH). */
  MVN: z.string().min(1).default('mvn'),
  TOOLGATE_KAFKA_HEAP: z
    .string()
    .regex(/^\d+[mg]$/)
    .default('512m'),
  TOOLGATE_REGISTRY_HEAP: z
    .string()
    .regex(/^\d+[mg]$/)
    .default('512m'),
  TOOLGATE_KEYCLOAK_PORT: port.default(DEFAULT_KEYCLOAK_PORT),
  TOOLGATE_KEYCLOAK_HEAP: z
    .string()
    .regex(/^\d+[mg]$/)
    .default('512m'),
  /** How long a launcher waits for its server to answer after spawning it. */
  TOOLGATE_START_TIMEOUT_MS: z.coerce.number().int().positive().default(120_000),
});

/** Settings of the local Kafka broker. */
export interface KafkaSettings {
  readonly version: string;
  readonly log4jVersion: string;
  readonly host: string;
  readonly port: number;
  readonly controllerPort: number;
  readonly heap: string;
  /** Lowest Java feature release that runs this Kafka. */
  readonly minJava: number;
}

/** Settings of the local schema registry. */
export interface RegistrySettings {
  readonly version: string;
  readonly host: string;
  readonly port: number;
  readonly heap: string;
  /** Apicurio 3.3 is compiled for Java 21 (class file 65). */
  readonly minJava: number;
}

/** Settings of the local Keycloak (the identity provider the console's sign-in tests run against). */
export interface KeycloakSettings {
  readonly version: string;
  readonly host: string;
  readonly port: number;
  readonly heap: string;
  /** Keycloak 26 needs Java 21 or later. */
  readonly minJava: number;
}

/** Settings of the local Kafka cluster: combined broker+controller KRaft nodes on loopback. */
export interface KafkaClusterSettings {
  readonly host: string;
  /** Node i (0-based) serves clients on firstPort + i and its controller on firstPort + nodes + i. */
  readonly firstPort: number;
  readonly nodes: number;
  readonly heap: string;
  /** What the cluster's topics are created with (the internal ones too). */
  readonly replicationFactor: number;
  readonly minInsyncReplicas: number;
}

/** Settings of the local Redis Cluster (redis-server in cluster mode on loopback ports). */
export interface RedisClusterSettings {
  readonly host: string;
  readonly firstPort: number;
  readonly masters: number;
  /** Replicas per master: one, so a master can fail over. */
  readonly replicasPerMaster: number;
  /** cluster-node-timeout: how long a master may be unreachable before its replica takes over. */
  readonly nodeTimeoutMs: number;
}

/** Everything the local launchers need, parsed once from the environment. */
export interface LocalServersConfig {
  readonly cacheDir: string;
  readonly javaHome: string | undefined;
  readonly mavenCommand: string;
  readonly startTimeoutMs: number;
  readonly kafka: KafkaSettings;
  readonly registry: RegistrySettings;
  readonly keycloak: KeycloakSettings;
  readonly redisCluster: RedisClusterSettings;
  readonly kafkaCluster: KafkaClusterSettings;
}

/**
 * Parses the launcher settings from `env` (defaults: ports 19092/19093/18081, cache
 * ~/.cache/toolgate). Throws a zod error naming the bad variable; call it once per process.
 */
export function loadLocalConfig(env: NodeJS.ProcessEnv = process.env): LocalServersConfig {
  const e = EnvSchema.parse(env);
  return {
    cacheDir: e.TOOLGATE_CACHE_DIR ?? join(homedir(), '.cache', 'toolgate'),
    javaHome: e.JAVA_HOME,
    mavenCommand: e.MVN,
    startTimeoutMs: e.TOOLGATE_START_TIMEOUT_MS,
    kafka: {
      version: KAFKA_VERSION,
      log4jVersion: LOG4J_VERSION,
      host: '127.0.0.1',
      port: e.KAFKA_PORT,
      controllerPort: e.KAFKA_CONTROLLER_PORT,
      heap: e.TOOLGATE_KAFKA_HEAP,
      minJava: 17,
    },
    registry: {
      version: APICURIO_VERSION,
      host: '127.0.0.1',
      port: e.SCHEMA_REGISTRY_PORT,
      heap: e.TOOLGATE_REGISTRY_HEAP,
      minJava: 21,
    },
    keycloak: {
      version: KEYCLOAK_VERSION,
      host: '127.0.0.1',
      port: e.TOOLGATE_KEYCLOAK_PORT,
      heap: e.TOOLGATE_KEYCLOAK_HEAP,
      minJava: 21,
    },
    kafkaCluster: {
      host: '127.0.0.1',
      firstPort: e.TOOLGATE_KAFKA_CLUSTER_PORT,
      nodes: 3,
      heap: e.TOOLGATE_KAFKA_CLUSTER_HEAP,
      replicationFactor: 3,
      minInsyncReplicas: 2,
    },
    redisCluster: {
      host: '127.0.0.1',
      firstPort: e.TOOLGATE_REDIS_CLUSTER_PORT,
      masters: 3,
      replicasPerMaster: 1,
      nodeTimeoutMs: 2_000,
    },
  };
}

/** The Kafka bootstrap address a client should use for these settings. */
export function kafkaBootstrap(k: KafkaSettings): string {
  return `${k.host}:${k.port}`;
}

/** The Confluent-compatible base URL (what @kafkajs/confluent-schema-registry takes as `host`). */
export function registryCcompatUrl(r: RegistrySettings): string {
  return `http://${r.host}:${r.port}${CCOMPAT_PATH}`;
}

/** The base URL of the local Keycloak (realms live under `/realms/<name>`). */
export function keycloakUrl(k: KeycloakSettings): string {
  return `http://${k.host}:${k.port}`;
}

import { fileURLToPath } from 'node:url';
import { DATABASE_URL, kafkaBrokers, REDIS_URL, schemaRegistryUrl } from '../helpers/env.js';
import { AUDIENCE, ISSUER, PARTITIONS, type ExecutorStack } from '../integration/executor/executor-stack.js';
import { startExecutorProcess, type ExecutorProcess } from '../integration/executor/executor-process.js';

/** Where the children's servers are; defaults are the stack's own (shared Kafka, Redis, Postgres). */
export interface FleetServers {
  readonly kafkaBrokers?: readonly string[];
  readonly redisUrl?: string;
  readonly databaseUrl?: string;
  readonly schemaRegistryUrl?: string;
  /** The argv prefix child number n (1-based) is started through, e.g. to run it in a namespace. */
  readonly launcher?: (n: number) => readonly string[];
}

/**
 * A group of executor child processes (services/executor/main.ts) over one stack, loading the chaos
 * catalog. `kill` SIGKILLs one and `spawn` starts a replacement under a fresh id; every child ever
 * started is remembered so its pid can be matched to ledger rows and its output searched.
 */
export interface ExecutorFleet {
  readonly live: ExecutorProcess[];
  readonly all: ExecutorProcess[];
  readonly killedPids: Set<number>;
  /** Live children that finished starting. */
  started(): number;
  spawn(): Promise<ExecutorProcess>;
  /** SIGKILLs the oldest child that finished starting and waits for it to exit. */
  killOne(): Promise<ExecutorProcess>;
  /** SIGTERMs every live child; resolves with their exit codes. */
  stop(): Promise<Array<number | null>>;
  /** SIGKILLs anything left (after a failed test). */
  destroy(): void;
}

export function createExecutorFleet(
  stack: ExecutorStack,
  extraEnv: Record<string, string>,
  servers: FleetServers = {},
): ExecutorFleet {
  const live: ExecutorProcess[] = [];
  const all: ExecutorProcess[] = [];
  const killedPids = new Set<number>();
  const readyPids = new Set<number>();
  let n = 0;
  const databaseUrl = servers.databaseUrl ?? DATABASE_URL;
  const sep = databaseUrl.includes('?') ? '&' : '?';
  const env = (id: string): Record<string, string> => ({
    KAFKA_BROKERS: (servers.kafkaBrokers ?? kafkaBrokers()).join(','),
    SCHEMA_REGISTRY_URL: servers.schemaRegistryUrl ?? schemaRegistryUrl(),
    REDIS_URL: servers.redisUrl ?? REDIS_URL,
    DATABASE_URL: `${databaseUrl}${sep}options=${encodeURIComponent(`-c search_path=${stack.db.schema}`)}`,
    TOOLGATE_TOPIC_PREFIX: stack.prefix,
    TOOLGATE_GROUP_ID: `${stack.prefix}-executors`,
    EXECUTOR_ID: id,
    MAX_CONCURRENCY: '24',
    CALLS_PARTITIONS: String(PARTITIONS.calls),
    RESULTS_PARTITIONS: String(PARTITIONS.results),
    AUDIT_PARTITIONS: String(PARTITIONS.audit),
    DLQ_PARTITIONS: String(PARTITIONS.dlq),
    PRINCIPAL_JWKS: JSON.stringify(stack.jwks),
    PRINCIPAL_ISSUER: ISSUER,
    PRINCIPAL_AUDIENCE: AUDIENCE,
    REDIS_KEY_PREFIX: stack.redis.prefix,
    TOOLGATE_CATALOG_MODULE: fileURLToPath(new URL('./chaos-catalog.ts', import.meta.url)),
    LEASE_MARGIN_MS: '1000',
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    KAFKA_REBALANCE_TIMEOUT_MS: '15000',
    KAFKA_HEARTBEAT_MS: '500',
    SHUTDOWN_TIMEOUT_MS: '10000',
    HTTP_PORT: '0',
    LOG_LEVEL: 'info',
    ...extraEnv,
  });
  return {
    live,
    all,
    killedPids,
    started: () => live.filter((c) => readyPids.has(c.pid)).length,
    async spawn() {
      n += 1;
      const id = `${stack.prefix}-exec-${n}`;
      const child = startExecutorProcess(id, env(id), servers.launcher?.(n) ?? []);
      live.push(child);
      all.push(child);
      await child.ready;
      readyPids.add(child.pid);
      return child;
    },
    async killOne() {
      // Only a child that finished starting: killing one mid-start tests start-up, not crashes.
      const at = live.findIndex((c) => readyPids.has(c.pid));
      if (at < 0) throw new Error('no started executor to kill');
      const [victim] = live.splice(at, 1) as [ExecutorProcess];
      killedPids.add(victim.pid);
      victim.child.kill('SIGKILL');
      await victim.exited;
      return victim;
    },
    async stop() {
      const stopping = live.splice(0);
      for (const c of stopping) c.child.kill('SIGTERM');
      return (await Promise.all(stopping.map((c) => c.exited))).map((e) => e.code);
    },
    destroy() {
      for (const c of all)
        if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    },
  };
}

import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import { schemaRegistryUrl } from '../helpers/env.js';
import { uniqueName } from '../helpers/names.js';
import type { Logger } from '../../libs/ports/logger.js';
import type { GuardedExecutor } from '../../services/executor/create-executor.js';
import {
  createExecutorStack,
  PARTITIONS,
  type ExecutorStack,
} from '../integration/executor/executor-stack.js';
import { ensureTestTopics } from '../integration/executor/test-parts.js';
import { publishRequests } from '../unit/executor/call-requests.js';
import { createExecutorFleet, type ExecutorFleet } from './executor-fleet.js';
import { chaosExecutor, type ChaosPipeline } from './chaos-pipeline.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { logTail, type LogTail } from './log-tail.js';
import { createNetLab, tidyStaleNetworks, type NetLab } from './netns.js';
import { startPrivateKafka, type PrivateKafka } from './private-kafka.js';
import { startPrivatePostgres, startPrivateRedis, type PrivateServer } from './private-servers.js';
import { SAFETY_LEDGER_DDL, type SafetyTool } from './safety-ledger.js';
import { collectTopic, privateReader, type TopicCollector } from './topic-collector.js';

/** The two networks: `k` reaches the broker, `d` the downstreams (Redis, Postgres, the registry). */
export type Network = 'k' | 'd';

/**
 * Everything a network scenario runs on. Hosts are namespaces `a`, `b`, … each running at most one
 * executor child at a time; the servers are private ones in the root namespace behind fault
 * proxies on the hub's address of each network:
 *
 *   host a ──eth-k── bridge k ── proxy ── private Kafka (advertised as the proxy)
 *          ──eth-d── bridge d ── proxies ── private Redis, private Postgres, the shared registry
 *
 * The test process's own clients (publisher, collectors) reach the broker through the same proxy
 * from the hub address, which no scenario faults.
 */
export interface NetworkLab {
  readonly net: NetLab;
  readonly hosts: readonly string[];
  readonly stack: ExecutorStack;
  readonly broker: PrivateKafka;
  readonly kafkaProxy: FaultProxy;
  readonly redisProxy: FaultProxy;
  readonly pgProxy: FaultProxy;
  readonly registryProxy: FaultProxy;
  readonly redisServer: PrivateServer;
  readonly pgServer: PrivateServer;
  /** A pool on the private Postgres, search_path = the stack's schema (where the effects are). */
  readonly pool: pg.Pool;
  readonly fleet: ExecutorFleet;
  readonly busLog: LogTail;
  /** The host child `n` (1-based) of the fleet runs on. */
  hostOf(n: number): string;
  collect<K extends 'results' | 'dlq' | 'audit'>(kind: K): Promise<TopicCollector<K>>;
  /** A signed call of `tool` on `key`; the call id is also the effect's ref. */
  call(tool: SafetyTool, i: number, key: string, tag: string): Promise<ToolCallRequestedEvent>;
  /** Publishes through the private broker, retrying (a retried publish may duplicate; idempotency absorbs it). */
  publish(events: readonly ToolCallRequestedEvent[]): Promise<number>;
  destroy(): Promise<void>;
}

export interface NetworkLabOptions {
  readonly hosts: readonly string[];
  /** Environment of every executor child, on top of the fleet's defaults. */
  readonly executorEnv: Record<string, string>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function createNetworkLab(name: string, options: NetworkLabOptions): Promise<NetworkLab> {
  await tidyStaleNetworks();
  const cleanups: Array<() => Promise<unknown>> = [];
  const destroy = async (): Promise<void> => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    const net = await createNetLab(options.hosts, ['k', 'd']);
    cleanups.push(() => net.destroy());
    const stack = await createExecutorStack(name);
    cleanups.push(() => stack.close());
    const redisServer = await startPrivateRedis();
    cleanups.push(() => redisServer.destroy());
    const pgServer = await startPrivatePostgres();
    cleanups.push(() => pgServer.destroy());
    const proxies: FaultProxy[] = [];
    cleanups.push(() => Promise.all(proxies.map((p) => p.close())));
    const proxy = async (network: Network, port: number, host = '127.0.0.1'): Promise<FaultProxy> => {
      const p = await startFaultProxy({ host: net.hubAddress(network) }, { host, port });
      proxies.push(p);
      return p;
    };
    let kafkaProxy!: FaultProxy;
    const broker = await startPrivateKafka({
      advertise: async (port) => {
        kafkaProxy = await proxy('k', port);
        return kafkaProxy.address;
      },
    });
    cleanups.push(() => broker.destroy());
    const redisProxy = await proxy('d', redisServer.port);
    const pgProxy = await proxy('d', pgServer.port);
    const registry = new URL(schemaRegistryUrl());
    const registryProxy = await proxy('d', Number(registry.port), registry.hostname);

    const pool = new pg.Pool({
      connectionString: pgServer.url,
      max: 12,
      options: `-c search_path=${stack.db.schema}`,
    });
    pool.on('error', () => undefined);
    cleanups.push(() => pool.end());
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${stack.db.schema}`);
    await pool.query(SAFETY_LEDGER_DDL);

    const busLog = logTail(`${name} publisher`);
    const bus = new KafkaEventBus({
      brokers: broker.brokers,
      clientId: uniqueName(`${name}_publisher`),
      logLevel: 'warn',
      logger: busLog,
    });
    cleanups.push(() => bus.close());
    await ensureTestTopics(bus, stack.topics, PARTITIONS);
    const { source } = privateReader(broker.brokers, `${name}_reader`, stack);
    const collectors: Array<TopicCollector<'results' | 'dlq' | 'audit'>> = [];
    cleanups.push(() => Promise.all(collectors.map((c) => c.stop().catch(() => undefined))));

    const hostOf = (n: number): string => options.hosts[(n - 1) % options.hosts.length]!;
    const catalog = fileURLToPath(new URL('./safety-catalog.ts', import.meta.url));
    const fleet = createExecutorFleet(
      stack,
      { TOOLGATE_CATALOG_MODULE: catalog, ...options.executorEnv },
      {
        kafkaBrokers: broker.brokers,
        redisUrl: `redis://${redisProxy.address}`,
        databaseUrl: `postgres://postgres@${pgProxy.address}/postgres`,
        schemaRegistryUrl: `http://${registryProxy.address}${registry.pathname}`,
        launcher: (n) => net.launcher(hostOf(n)),
      },
    );
    cleanups.push(async () => fleet.destroy());

    const template = await stack.request({ key: 'k0', seq: 0, ref: 'template' });
    return {
      net,
      hosts: options.hosts,
      stack,
      broker,
      kafkaProxy,
      redisProxy,
      pgProxy,
      registryProxy,
      redisServer,
      pgServer,
      pool,
      fleet,
      busLog,
      hostOf,
      async collect(kind) {
        const c = await collectTopic(source, kind);
        collectors.push(c);
        return c;
      },
      call(tool, i, key, tag) {
        const callId = `${stack.prefix}-${tag}${i}`;
        return stack.request(
          { key, seq: i, ref: callId },
          {
            callId,
            index: i,
            tool,
            principalAssertion: template.principalAssertion,
            traceId: template.traceId,
          },
        );
      },
      async publish(events) {
        let retries = 0;
        for (const event of events) {
          for (let attempt = 0; ; attempt++) {
            try {
              await publishRequests(bus, stack.codec, stack.topics.calls, [event]);
              break;
            } catch (error) {
              if (attempt >= 60) throw error;
              retries += 1;
              await sleep(500);
            }
          }
        }
        return retries;
      },
      destroy,
    };
  } catch (error) {
    await destroy();
    throw error;
  }
}

/** A suite's lab and the collectors of its results and dead letters, from the beginning of the topics. */
export interface LabScene {
  readonly lab: NetworkLab;
  readonly results: TopicCollector<'results'>;
  readonly dlq: TopicCollector<'dlq'>;
}

export interface LabSceneOptions {
  /** The hosts; default `a` and `b`. */
  readonly hosts?: readonly string[];
  /** Environment of every executor child, on top of the fleet's defaults. */
  readonly executorEnv: Record<string, string>;
  /** Executor children spawned (all at once) before the first test; default none. */
  readonly executors?: number;
}

/**
 * Registers the suite's hooks around a network lab: `beforeAll` (up to 180 s) creates the lab
 * `name`, starts its results and dead-letter collectors and spawns `options.executors` children;
 * `afterAll` destroys the lab (and with it the collectors and the fleet). The scene's fields throw
 * when read before `beforeAll` finished.
 */
export function labScene(name: string, options: LabSceneOptions): LabScene {
  let ready: LabScene | undefined;
  let lab: NetworkLab | undefined;
  beforeAll(async () => {
    lab = await createNetworkLab(name, {
      hosts: options.hosts ?? ['a', 'b'],
      executorEnv: options.executorEnv,
    });
    const started = lab;
    const results = await started.collect('results');
    const dlq = await started.collect('dlq');
    await Promise.all(Array.from({ length: options.executors ?? 0 }, () => started.fleet.spawn()));
    ready = { lab: started, results, dlq };
  }, 180_000);
  afterAll(async () => {
    await lab?.destroy();
  });
  const scene = (): LabScene => {
    if (ready === undefined) throw new Error(`the lab ${name} is not up (its beforeAll did not finish)`);
    return ready;
  };
  return {
    get lab() {
      return scene().lab;
    },
    get results() {
      return scene().results;
    },
    get dlq() {
      return scene().dlq;
    },
  };
}

/** Waits for `work` at most `ms`; never rejects. */
export async function within(work: Promise<unknown> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    (work ?? Promise.resolve()).catch(() => undefined),
    new Promise((r) => (timer = setTimeout(r, ms))),
  ]);
  clearTimeout(timer);
}

/**
 * An executor in this process, built by `createExecutor` (`testExecutor`), in the lab's executor
 * group, on the lab's topics and signing keys, over `bus` (usually through the broker's proxy) and
 * the chaos parts `pipeline` (tools, stores, shared breakers): eight calls at once, publish retries
 * 50 ms doubling to 1 s. Started and stopped by the caller.
 */
export function labExecutor(
  lab: NetworkLab,
  parts: {
    readonly bus: KafkaEventBus;
    readonly pipeline: ChaosPipeline;
    readonly owner: string;
    readonly logger: Logger;
  },
): GuardedExecutor {
  return chaosExecutor(lab.stack, parts.pipeline, {
    bus: parts.bus,
    ownerId: parts.owner,
    logger: parts.logger,
    maxConcurrency: 8,
  });
}

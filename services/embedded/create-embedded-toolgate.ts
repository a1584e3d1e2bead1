import { MemoryAuditStore } from '../../libs/adapters/memory/audit-store.js';
import { MemoryCaseStore } from '../../libs/adapters/memory/case-store.js';
import {
  MemoryFactStore,
  MemoryIdempotencyStore,
  MemoryRateLimiter,
} from '../../libs/adapters/memory/index.js';
import { MemoryEventBus } from '../../libs/bus/memory/memory-event-bus.js';
import { defineCatalog, type AnyToolDefinition, type Catalog } from '../../libs/catalog/catalog.js';
import { systemClock } from '../../libs/core/system-clock.js';
import { LocalEventCodec } from '../../libs/events/local-codec.js';
import { topicNames, type TopicNames } from '../../libs/events/topics.js';
import type { ManagedCircuitBreakers } from '../../libs/execution/breakers.js';
import type { PolicyEngine } from '../../libs/pipeline/deps.js';
import type { AuditStore } from '../../libs/ports/audit-store.js';
import type { CaseStore } from '../../libs/ports/case-store.js';
import type { Clock } from '../../libs/core/clock.js';
import type { BucketLimit } from '../../libs/ports/rate-limiter.js';
import type { ToolCallResolution, ToolgateClient } from '../sdk/index.js';
import { quietLogger, type TopologyLogger } from './topology-logger.js';
import { createTopology, type TopicPartitions } from './topology.js';

/** How an embedded toolgate runs, whatever its tools. */
export interface EmbeddedRunOptions {
  /** Default: the system clock (the executors' timeouts and backoffs are real waits). */
  readonly clock?: Clock;
  /** Executor instances sharing the calls topic. Default 2. */
  readonly executors?: number;
  /** Default: {@link quietLogger}. */
  readonly logger?: TopologyLogger;
  /** Waits before each reconciliation status check. Default: the reconciler's (1, 2, 4, 8, 16 s). */
  readonly checkScheduleMs?: readonly number[];
  /** Late definite answers to calls a turn returned as UNRESOLVED (usually from the reconciler). */
  readonly onResolution?: (resolution: ToolCallResolution) => void;
}

/**
 * What to run: exactly the tools given (with optional rules and outbound limits), or a whole
 * catalog. Nothing else is mixed in.
 */
export type EmbeddedToolgateOptions<C extends Catalog = Catalog> = EmbeddedRunOptions &
  (
    | {
        /** The tools to run, each made with `defineTool`. */
        readonly tools: readonly AnyToolDefinition[];
        /** Business rules (`createPolicyEngine`). Default: none. */
        readonly policy?: PolicyEngine;
        /** Outbound budget per downstream name. Default: none limited. */
        readonly downstreamLimits?: Readonly<Record<string, BucketLimit>>;
        readonly catalog?: never;
      }
    | {
        /** A catalog (`defineCatalog`, or one of your own); closed by `stop`. */
        readonly catalog: C;
        readonly tools?: never;
        readonly policy?: never;
        readonly downstreamLimits?: never;
      }
  );

/** The whole of toolgate in one process, with nothing listening on a port. */
export interface EmbeddedToolgate<C extends Catalog = Catalog> {
  /** The agent SDK, already wired to the in-memory bus: `client.runTurn(...)`. */
  readonly client: ToolgateClient;
  /** What the executors run: `catalog.registry.forPrincipal(p)` lists what a principal may call. */
  readonly catalog: C;
  /** The append-only audit log the sink writes (query, verify, whoDid). */
  readonly auditStore: AuditStore;
  /** Reconciliation cases (opened by the reconciler from dead letters). */
  readonly caseStore: CaseStore;
  readonly bus: MemoryEventBus;
  readonly topics: TopicNames;
  /** Each executor's circuit breakers (per downstream). */
  readonly breakers: readonly ManagedCircuitBreakers[];
  /** Starts executors, audit sink, reconciler and client; resolves when all have joined. */
  start(): Promise<void>;
  /** Stops everything, then closes the bus and the catalog. Idempotent. */
  stop(): Promise<void>;
  /** Resolves once every call id has its audit record (the sink writes asynchronously). */
  awaitAudited(callIds: readonly string[], timeoutMs?: number): Promise<void>;
}

/** Small partition counts: enough to show per-key ordering and several executors sharing work. */
const PARTITIONS: TopicPartitions = { calls: 4, results: 2, audit: 2, dlq: 1 };

/**
 * toolgate's full topology in one process, for agent developers' local runs and tests: the memory
 * event bus with the local Avro codec (the same bytes as on Kafka, without a registry), memory
 * idempotency and rate-limit stores shared by the executors, executors built by `createExecutor`
 * exactly as the executor process builds them, the audit sink into a memory audit store, the
 * reconciler over a memory case store, and the SDK client (which signs each turn's principal with
 * a key pair made here). Behaviour does not depend on the transport: the same parts run on Kafka,
 * Redis and Postgres. Throws `ToolDefinitionError` when a tool is invalid or given twice.
 *
 * ```ts
 * const toolgate = createEmbeddedToolgate({ tools: [lookupTicket] });
 * await toolgate.start();
 * const turn = await toolgate.client.runTurn({ provider: 'openai', response }, { principal, taskId, step: 0 });
 * await toolgate.stop();
 * ```
 */
export function createEmbeddedToolgate<C extends Catalog = Catalog>(
  options: EmbeddedToolgateOptions<C>,
): EmbeddedToolgate<C> {
  const catalog = (options.catalog ??
    defineCatalog({
      tools: options.tools ?? [],
      ...(options.policy === undefined ? {} : { policy: options.policy }),
      ...(options.downstreamLimits === undefined ? {} : { downstreamLimits: options.downstreamLimits }),
    })) as C;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? quietLogger;
  const bus = new MemoryEventBus({ clock, logger, commitIntervalMs: 50, redeliveryDelayMs: 20 });
  const topics = topicNames('toolgate');
  const auditStore = new MemoryAuditStore();
  const caseStore = new MemoryCaseStore(clock);
  const topology = createTopology({
    bus,
    codec: new LocalEventCodec(),
    topics,
    partitions: PARTITIONS,
    idempotency: new MemoryIdempotencyStore(clock),
    rateLimiter: new MemoryRateLimiter(clock),
    facts: new MemoryFactStore(),
    auditStore,
    caseStore,
    catalog,
    clock,
    logger,
    deploymentId: 'embedded',
    ...(options.executors === undefined ? {} : { executors: options.executors }),
    ...(options.checkScheduleMs === undefined ? {} : { checkScheduleMs: options.checkScheduleMs }),
    ...(options.onResolution === undefined ? {} : { onResolution: options.onResolution }),
  });
  let stopping: Promise<void> | undefined;
  return {
    client: topology.client,
    catalog,
    auditStore,
    caseStore,
    bus,
    topics,
    breakers: topology.breakers,
    start: () => topology.start(),
    stop() {
      stopping ??= (async () => {
        await topology.stop();
        await bus.close();
        await catalog.close?.();
      })();
      return stopping;
    },
    awaitAudited: (callIds, timeoutMs) => topology.awaitAudited(callIds, timeoutMs),
  };
}

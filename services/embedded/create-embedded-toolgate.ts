import { MemoryAuditStore } from '../../libs/adapters/memory/audit-store.js';
import { MemoryCaseStore } from '../../libs/adapters/memory/case-store.js';
import { MemoryIdempotencyStore, MemoryRateLimiter } from '../../libs/adapters/memory/index.js';
import { MemoryEventBus } from '../../libs/bus/memory/memory-event-bus.js';
import { systemClock } from '../../libs/core/system-clock.js';
import { LocalEventCodec } from '../../libs/events/local-codec.js';
import { topicNames, type TopicNames } from '../../libs/events/topics.js';
import type { ManagedCircuitBreakers } from '../../libs/execution/breakers.js';
import type { AuditStore } from '../../libs/ports/audit-store.js';
import type { CaseStore } from '../../libs/ports/case-store.js';
import type { Clock } from '../../libs/ports/clock.js';
import type { PatternBackends } from '../catalog/pattern-backends.js';
import { buildStoreCatalog, type StoreCatalog } from '../catalog/store-catalog.js';
import { createMemoryDownstreams } from '../downstreams/memory-downstreams.js';
import type { StoreDownstreams } from '../downstreams/store-downstreams.js';
import type { ToolCallResolution, ToolgateClient } from '../sdk/index.js';
import { quietLogger, type TopologyLogger } from './topology-logger.js';
import { createTopology, type TopicPartitions } from './topology.js';

export interface EmbeddedToolgateOptions {
  /** Default: the system clock (the executors' timeouts and backoffs are real waits). */
  readonly clock?: Clock;
  /** Executor instances sharing the calls topic. Default 2. */
  readonly executors?: number;
  /** Default: {@link quietLogger}. */
  readonly logger?: TopologyLogger;
  /** The store's services; default fresh in-memory ones seeded with the story's data. */
  readonly downstreams?: StoreDownstreams;
  /**
   * The pattern tools' backends; default in-memory ones (`memoryPatternBackends`: report jobs and
   * the purchase-order pair with a random preview key). Pass `memoryPatternBackends(clock, {...})`
   * with a legacy filing URL, a documents folder or a reports pool to register those tools too.
   * Closed by `stop`.
   */
  readonly patterns?: PatternBackends;
  /** Waits before each reconciliation status check. Default: the reconciler's (1, 2, 4, 8, 16 s). */
  readonly checkScheduleMs?: readonly number[];
  /** Late definite answers to calls a turn returned as UNRESOLVED (usually from the reconciler). */
  readonly onResolution?: (resolution: ToolCallResolution) => void;
}

/** The whole of toolgate in one process, with nothing listening on a port. */
export interface EmbeddedToolgate {
  /** The agent SDK, already wired to the in-memory bus: `client.runTurn(...)`. */
  readonly client: ToolgateClient;
  readonly catalog: StoreCatalog;
  /** The fake store's services: the payment ledger, fault switches. */
  readonly downstreams: StoreDownstreams;
  /** The append-only audit log the sink writes (query, verify, whoDid). */
  readonly auditStore: AuditStore;
  /** Reconciliation cases (opened by the reconciler from dead letters). */
  readonly caseStore: CaseStore;
  readonly bus: MemoryEventBus;
  readonly topics: TopicNames;
  readonly breakers: readonly ManagedCircuitBreakers[];
  /** Starts executors, audit sink and client; resolves when all have joined. */
  start(): Promise<void>;
  /** Stops everything, then closes the bus and the downstreams. Idempotent. */
  stop(): Promise<void>;
  /** See Topology.awaitAudited. */
  awaitAudited(callIds: readonly string[], timeoutMs?: number): Promise<void>;
}

/** Small partition counts: enough to show per-key ordering and several executors sharing work. */
const PARTITIONS: TopicPartitions = { calls: 4, results: 2, audit: 2, dlq: 1 };

/**
 * Builds toolgate's full topology in one process ("embedded default"): the memory event
 * bus with the local Avro codec (the same bytes as on Kafka, without a registry), memory
 * idempotency and rate-limit stores shared by the executors, executors running the store catalog
 * over in-memory fake services and in-memory pattern backends (jobs, preview tokens, purchasing), the audit sink into a memory audit store, the reconciler over a
 * memory case store, and the SDK client.
 * Behaviour does not depend on the transport: the same parts run on Kafka, Redis and Postgres.
 */
export function createEmbeddedToolgate(options: EmbeddedToolgateOptions = {}): EmbeddedToolgate {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? quietLogger;
  const bus = new MemoryEventBus({ clock, logger, commitIntervalMs: 50, redeliveryDelayMs: 20 });
  const topics = topicNames('toolgate');
  const downstreams = options.downstreams ?? createMemoryDownstreams({ clock });
  const catalog = buildStoreCatalog(downstreams, clock, options.patterns);
  const auditStore = new MemoryAuditStore();
  const caseStore = new MemoryCaseStore(clock);
  const rateLimiter = new MemoryRateLimiter(clock);
  const topology = createTopology({
    bus,
    codec: new LocalEventCodec(),
    topics,
    partitions: PARTITIONS,
    idempotency: new MemoryIdempotencyStore(clock),
    rateLimiter,
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
    downstreams,
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
        await catalog.close();
      })();
      return stopping;
    },
    awaitAudited: (callIds, timeoutMs) => topology.awaitAudited(callIds, timeoutMs),
  };
}

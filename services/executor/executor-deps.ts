import type { PrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import type { ExecutionContext, NormalizedToolCall } from '../../libs/core/types.js';
import type { TopicNames } from '../../libs/events/topics.js';
import type { PipelineRun, RunOptions } from '../../libs/pipeline/guard-pipeline.js';
import type { ToolResolver } from '../../libs/pipeline/deps.js';
import type { Clock } from '../../libs/ports/clock.js';
import type { EventPublisher, EventSubscriber } from '../../libs/ports/event-bus.js';
import type { EventCodec } from '../../libs/ports/event-codec.js';
import type { BackoffPolicy } from './backoff.js';
import type { ExecutorLogger } from './logger.js';

/**
 * Runs one call through the guard pipeline. `GuardPipeline` is the implementation; the contract is
 * its: total (never rejects), exactly one result and one audit record per run, and safe to repeat
 * for the same call (the idempotency stage makes one effect out of many runs).
 */
export interface CallRunner {
  run(call: NormalizedToolCall, ctx: ExecutionContext, opts: RunOptions): Promise<PipelineRun>;
}

/** Everything an executor uses. main.ts wires the real adapters; tests wire in-memory ones. */
export interface ExecutorDeps {
  readonly publisher: EventPublisher;
  readonly subscriber: EventSubscriber;
  readonly codec: EventCodec;
  readonly topics: TopicNames;
  /**
   * Topics a request may name as its reply topic, each with its partition count. Requests naming
   * anything else (or a partition outside the count) are dead-lettered as POISON, never published
   * to. Usually `{ [topics.results]: <its partition count> }`.
   */
  readonly replyTopics: Readonly<Record<string, number>>;
  readonly pipeline: CallRunner;
  /** The registry the pipeline resolves against; read to know whether a failed tool changes state. */
  readonly tools: ToolResolver;
  readonly verifier: PrincipalVerifier;
  readonly clock: Clock;
  readonly logger: ExecutorLogger;
  /** This instance's id: `producerId` of everything it publishes (the pipeline's lease owner too). */
  readonly ownerId: string;
  /** The consumer group all executors of a deployment share. */
  readonly groupId: string;
  /** Calls of one partition batch running at once (distinct resource keys only). */
  readonly maxConcurrency: number;
  /** Partitions this instance handles at once; the bound on running calls is the product. */
  readonly partitionsConcurrently: number;
  /** Where a partition the group never consumed starts: earliest (default true) or the log end. */
  readonly fromBeginning?: boolean;
  /**
   * How long `stop()` lets running calls finish before aborting them (their signal fires; a
   * state-changing call cut short is UNRESOLVED, never failed). Default 30 s.
   */
  readonly shutdownTimeoutMs?: number;
  /** After the abort, how long outputs still get to publish before `stop()` gives up. Default 5 s. */
  readonly publishGraceMs?: number;
  /** Retry pacing for an unreachable schema registry or broker. Default 100 ms doubling to 5 s. */
  readonly backoff?: BackoffPolicy;
  /** Cap on the poison bytes kept in a dead letter. Default 64 KiB. */
  readonly maxRawPayloadBytes?: number;
  /** Unique ids for audit records (one per attempt). Default `crypto.randomUUID`. */
  readonly newId?: () => string;
}

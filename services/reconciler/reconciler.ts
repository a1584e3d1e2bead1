import { DEFAULT_CHECK_SCHEDULE_MS, checkSchedule } from '../../libs/reconcile/check-schedule.js';
import type { TopicNames } from '../../libs/events/topics.js';
import type { ToolResolver } from '../../libs/pipeline/deps.js';
import type { CaseStore } from '../../libs/ports/case-store.js';
import type { Clock } from '../../libs/core/clock.js';
import type { EventPublisher, EventSubscriber } from '../../libs/ports/event-bus.js';
import type { EventCodec } from '../../libs/events/event-codec.js';
import type { IdempotencyStore } from '../../libs/ports/idempotency-store.js';
import type { CheckStep } from './case-moves.js';
import type { OriginalCalls } from '../../libs/reconcile/original-call.js';
import { createDeadLetterConsumer } from './dead-letter-consumer.js';
import { createDueChecker } from './due-checker.js';
import type { Logger } from '../../libs/ports/logger.js';
import { DEFAULT_BACKOFF, type Backoff } from '../../libs/core/backoff.js';
import type { CaseRequest } from '../../libs/reconcile/case-request.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { DEFAULT_AUTO_REDRIVE_MAX, DEFAULT_RESUBMIT_GRACE_MS } from './auto-redrive.js';

/** Everything a reconciler uses. main.ts wires Kafka, Postgres and Redis; tests wire memory adapters. */
export interface ReconcilerDeps {
  readonly subscriber: EventSubscriber;
  readonly publisher: EventPublisher;
  readonly codec: EventCodec;
  readonly topics: TopicNames;
  readonly cases: CaseStore;
  /**
   * The executors' idempotency store: reconciled outcomes are settled there, and the answer the
   * executor recorded for a re-submitted call is read there (peek, never a claim) to close its case.
   */
  readonly idempotency: IdempotencyStore;
  /** The registry of the tools (and their status checks) the executors run. */
  readonly tools: ToolResolver;
  readonly clock: Clock;
  readonly logger: Logger;
  /** This instance: `producerId` of everything it publishes. */
  readonly reconcilerId: string;
  /** The consumer group of all reconcilers on the dead-letter topic. */
  readonly groupId: string;
  /** Reply topics results may go to, with their partition counts (as the executor's). */
  readonly replyTopics: Readonly<Record<string, number>>;
  /** How long settled idempotency records live; use the executor's result TTL. */
  readonly resultTtlMs: number;
  /** Waits before each status check of a round. Default 1, 2, 4, 8, 16 s. */
  readonly checkScheduleMs?: readonly number[];
  /** Limit on one status check. Default: the tool's own timeout. */
  readonly checkTimeoutMs?: number;
  /**
   * Reads a call's full arguments back from the calls topic for its status checks (dead letters
   * and cases keep only the tool's audit allow-listed fields). service.ts wires a Kafka reader.
   */
  readonly originalCalls?: OriginalCalls;
  /**
   * At most this many automatic redrives per case (services/reconciler/auto-redrive.ts): an open
   * UNRESOLVED call of a tool that forwards its idempotency key is re-submitted with that key by
   * the reconciler itself, up to this often, then handed to a person. 0 turns them off. Default 2.
   */
  readonly autoRedriveMax?: number;
  /**
   * After an automatic re-submission, how long the executor gets before its answer is first read.
   * Default 30 s.
   */
  readonly resubmitGraceMs?: number;
  /**
   * Signs the principal assertion an automatic re-submission is sent with (dead letters keep none);
   * `tool` is the version the re-submission runs. service.ts wires one when a signing key is
   * configured. Undefined: no automatic redrive (the case goes to a person, saying so).
   */
  readonly resubmissionAssertion?: (
    request: CaseRequest,
    tool: ToolDefinition,
  ) => Promise<string | undefined>;
  readonly pollIntervalMs?: number;
  readonly pageSize?: number;
  readonly checkConcurrency?: number;
  readonly partitionsConcurrently?: number;
  readonly fromBeginning?: boolean;
  readonly backoff?: Backoff;
  /** After `stop`, how long deliveries still retry before they are abandoned. Default 10 s. */
  readonly shutdownGraceMs?: number;
}

/** A running reconciler: the dead-letter consumer plus the due-check loop. */
export interface Reconciler {
  /** Joins the dead-letter group and starts the due-check loop. Rejects when started twice. */
  start(): Promise<void>;
  /** Visits the cases due now once (what the loop does on each tick). */
  checkDue(): Promise<CheckStep[]>;
  /**
   * Stops taking dead letters and starting checks; checks in progress finish, deliveries retry for
   * at most `shutdownGraceMs`. What is not finished stays in the store (cases stay due, unopened dead
   * letters are delivered again). Idempotent.
   */
  stop(): Promise<void>;
}

/**
 * Builds a reconciler: dead letters become cases (none is silently dropped); UNRESOLVED
 * cases are status-checked on the schedule and settled, answered and audited, or handed to a person;
 * those of a tool that forwards its idempotency key (and has no status check) are re-submitted by
 * the reconciler itself, at most `autoRedriveMax` times, and settled by the executor's answer;
 * POISON and EXHAUSTED ones go to a person at once. Any number may run side by side.
 */
export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const checker = {
    ...deps,
    backoff: deps.backoff ?? DEFAULT_BACKOFF,
    schedule: checkSchedule(deps.checkScheduleMs ?? DEFAULT_CHECK_SCHEDULE_MS),
    autoRedriveMax: wholeNumber('autoRedriveMax', deps.autoRedriveMax ?? DEFAULT_AUTO_REDRIVE_MAX, 0),
    resubmitGraceMs: wholeNumber('resubmitGraceMs', deps.resubmitGraceMs ?? DEFAULT_RESUBMIT_GRACE_MS, 1),
  };
  const consumer = createDeadLetterConsumer(checker);
  const due = createDueChecker(checker, {
    ...(deps.pollIntervalMs === undefined ? {} : { pollIntervalMs: deps.pollIntervalMs }),
    ...(deps.pageSize === undefined ? {} : { pageSize: deps.pageSize }),
    ...(deps.checkConcurrency === undefined ? {} : { concurrency: deps.checkConcurrency }),
  });
  let starting: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;

  return {
    start() {
      if (starting !== undefined) return Promise.reject(new Error('the reconciler was already started'));
      starting = (async () => {
        await consumer.start();
        due.start();
        deps.logger.info({ reconcilerId: deps.reconcilerId, groupId: deps.groupId }, 'reconciler started');
      })();
      return starting;
    },
    checkDue: () => due.checkDue(),
    stop() {
      stopping ??= (async () => {
        await starting?.catch(() => undefined);
        const kill = new AbortController();
        const grace = new AbortController();
        deps.clock.sleep(deps.shutdownGraceMs ?? 10_000, grace.signal).then(
          () => kill.abort(new Error('shutdown grace passed')),
          () => undefined,
        );
        try {
          await Promise.all([consumer.stop(), due.stop(kill.signal)]);
        } finally {
          grace.abort();
        }
        deps.logger.info({ reconcilerId: deps.reconcilerId }, 'reconciler stopped');
      })();
      return stopping;
    },
  };
}

/** `value` when it is a whole number >= `min`; throws RangeError naming the setting otherwise. */
function wholeNumber(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`${name} must be a whole number >= ${min}, got ${value}`);
  }
  return value;
}

import { Kafka, logLevel } from 'kafkajs';
import { topicNames } from '../../libs/events/topics.js';
import type { ToolResolver } from '../../libs/pipeline/deps.js';
import type { CaseStore } from '../../libs/ports/case-store.js';
import type { Clock } from '../../libs/core/clock.js';
import { silentLogger, type Logger } from '../../libs/ports/logger.js';
import { createOperations, type Operations, type OperationsDeps } from '../../libs/reconcile/operations.js';
import { kafkaOriginalCalls } from '../../libs/reconcile/original-call.js';
import { DEFAULT_BACKOFF } from '../../libs/core/backoff.js';
import type { Args } from './args.js';
import type { CliConfig } from './config.js';
import type { Output } from './output.js';
import type { Resources } from './resources.js';

/** The executors' default result TTL (services/executor/config.ts RESULT_TTL_MS). */
const DEFAULT_RESULT_TTL_MS = 7 * 24 * 3600 * 1000;

/** What the dlq commands need to reach the reconciliation operations. */
export interface OperationsContext {
  readonly args: Args;
  readonly config: CliConfig;
  readonly resources: Resources;
  readonly out: Output;
  /** Operations given by the caller (io.operations); used as they are. */
  readonly given: Operations | undefined;
}

/**
 * The reconciliation operations (libs/reconcile/operations.ts) wired for one command.
 *
 * `read` (list) opens the case store only; `show` also the tool catalog, whose retry safety decides
 * what a redrive would do (the next-step hints apply the redrive's own rule). `write` (resolve, redrive) opens everything a
 * resolution delivers to, each proved reachable before any case is moved: Postgres (cases, the tool
 * catalog), Kafka (audit records, results and re-submissions, through an idempotent producer; the
 * original calls of re-submissions are read back from the calls topic), the
 * schema registry (the event codec) and Redis (the executors' idempotency records). Operations
 * retry an unreachable dependency for up to 30 s, logging each retry to stderr.
 */
export async function openOperations(
  ctx: OperationsContext,
  mode: 'read' | 'show' | 'write',
): Promise<Operations> {
  if (ctx.given !== undefined) return ctx.given;
  const { args, config, resources } = ctx;
  const cases = await resources.caseStore();
  if (mode === 'read') return createOperations(readOnlyDeps(cases, resources.clock));
  if (mode === 'show') {
    const { registry } = await resources.catalog();
    return createOperations(readOnlyDeps(cases, resources.clock, registry));
  }
  const topics = topicNames(
    config.get('TOOLGATE_TOPIC_PREFIX', args.command, { flag: 'prefix', value: args.string('prefix') }) ??
      'toolgate',
  );
  const catalog = await resources.catalog();
  const idempotency = await resources.idempotencyStore();
  const admin = await resources.kafkaAdmin();
  const resultPartitions = (await admin.listTopics()).includes(topics.results)
    ? (await admin.fetchTopicMetadata({ topics: [topics.results] })).topics[0]?.partitions.length
    : undefined;
  if (resultPartitions === undefined) {
    ctx.out.note(`warning: topic ${topics.results} does not exist; no result will be sent to requesters.`);
  }
  const publisher = await resources.publisher();
  const codec = await resources.codec(topics);
  return createOperations({
    cases,
    tools: catalog.registry,
    publisher,
    // A re-submission reads its full arguments back from the calls topic (cases keep only the
    // allow-listed fields).
    originalCalls: kafkaOriginalCalls({
      kafka: new Kafka({
        brokers: [...resources.brokers()],
        clientId: 'toolgate-cli-calls-reader',
        logLevel: logLevel.NOTHING,
      }),
      codec,
      groupPrefix: 'toolgate-cli',
    }),
    codec,
    topics,
    idempotency,
    clock: resources.clock,
    logger: stderrLogger(ctx.out),
    backoff: DEFAULT_BACKOFF,
    // Results go only to the results topic, as the executor sends them; a missing topic gets none.
    replyTopics: resultPartitions === undefined ? {} : { [topics.results]: resultPartitions },
    resultTtlMs: config.get('RESULT_TTL_MS', args.command) ?? DEFAULT_RESULT_TTL_MS,
  });
}

/**
 * Deps for list and show, which read cases (and for show, the tool catalog `tools`) only: the other
 * dependencies are not opened, and touching one is a programming error reported as such.
 */
function readOnlyDeps(cases: CaseStore, clock: Clock, tools?: ToolResolver): OperationsDeps {
  const unopened = (what: string): never => {
    throw new Error(`${what} is not opened for a read-only dlq command`);
  };
  return {
    cases,
    clock,
    logger: silentLogger,
    backoff: DEFAULT_BACKOFF,
    topics: topicNames(),
    replyTopics: {},
    resultTtlMs: DEFAULT_RESULT_TTL_MS,
    get tools() {
      return tools ?? unopened('the tool catalog');
    },
    get publisher() {
      return unopened('the event bus');
    },
    get codec() {
      return unopened('the event codec');
    },
    get idempotency() {
      return unopened('the idempotency store');
    },
  };
}

/** Warnings and errors of the operations (e.g. a retried publish) as stderr lines. */
function stderrLogger(out: Output): Logger {
  const line =
    (level: string) =>
    (obj: object, msg?: string): void => {
      const fields = Object.entries(obj)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ');
      out.note(`${level}: ${msg ?? ''}${fields ? ` (${fields})` : ''}`);
    };
  return { ...silentLogger, warn: line('warning'), error: line('error') };
}

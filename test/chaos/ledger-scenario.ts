import type { Cluster, Redis } from 'ioredis';
import type pg from 'pg';
import type {
  DeadLetterEvent,
  ToolCallRequestedEvent,
  ToolCallResultEvent,
} from '../../libs/events/contracts.js';
import type { IdempotencyStore } from '../../libs/ports/idempotency-store.js';
import type { GuardedExecutor } from '../../services/executor/create-executor.js';
import { createExecutorStack, type ExecutorStack } from '../integration/executor/executor-stack.js';
import { LEDGER_DDL, ledgerRows } from '../integration/executor/ledger-tools.js';
import {
  chaosExecutor,
  chaosPipeline,
  type ChaosExecutorOptions,
  type ChaosPipeline,
} from './chaos-pipeline.js';
import { lossyLedgerTool } from './lossy-ledger.js';

/**
 * What the in-process outage scenarios (a Redis master failover, a Kafka broker restart, a Kafka
 * leader failover, dependency outages) share: a stack with the ledger, the chaos parts around the
 * ledger tool, executors built the same way over a scenario's bus and pipeline, calls of the ledger
 * tool and their paced publication, and one tally of what the ledger and the result topic say about
 * them. Meant to be imported as a namespace (`import * as ledger from './ledger-scenario.js'`), so
 * the scenarios read `ledger.calls(...)`, `ledger.tally(...)`.
 */

/** An executor stack `name` whose schema holds the ledger table; closed again if that fails. */
export async function openStack(name: string): Promise<ExecutorStack> {
  const stack = await createExecutorStack(name);
  try {
    await stack.db.pool.query(LEDGER_DDL);
    return stack;
  } catch (error) {
    await stack.close();
    throw error;
  }
}

/**
 * The chaos parts of an outage scenario: the ledger tool on `pool` (2 ms of work, no response lost)
 * and the stores on `redis` under `keyPrefix`; `idempotency` replaces the Redis idempotency store.
 */
export function pipeline(options: {
  readonly redis: Redis | Cluster;
  readonly keyPrefix: string;
  readonly pool: pg.Pool;
  readonly idempotency?: IdempotencyStore;
}): ChaosPipeline {
  return chaosPipeline({
    redis: options.redis,
    keyPrefix: options.keyPrefix,
    tools: [lossyLedgerTool(options.pool, { workMs: 2, losePerMille: 0 })],
    idempotency: options.idempotency,
  });
}

/**
 * Publishes `calls` in batches of `perTick`, one batch every 100 ms, each through `publish` (awaited
 * before the pause); resolves after the last batch's pause.
 */
export async function publishInTicks(
  calls: readonly ToolCallRequestedEvent[],
  perTick: number,
  publish: (batch: readonly ToolCallRequestedEvent[]) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < calls.length; i += perTick) {
    await publish(calls.slice(i, i + perTick));
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** How many distinct calls `events` answer. */
export function answered(events: readonly ToolCallResultEvent[]): number {
  return new Set(events.map((e) => e.callId)).size;
}

/** How many of `sentinels` the tally holds a SUCCESS answer for. */
export function sentinelsSucceeded(
  sentinels: readonly ToolCallRequestedEvent[],
  tally: Pick<LedgerTally, 'outcomesOf'>,
): number {
  return sentinels.filter((s) => tally.outcomesOf(s.callId).includes('SUCCESS')).length;
}

/**
 * An in-process executor of `stack`'s group (`<prefix>-executors`), as the outage scenarios run it:
 * built by `createExecutor` (`testExecutor`) from the chaos parts (tools, stores, the scenario's
 * shared breakers), 24 calls at once, a redelivery backoff of 50 ms doubling to 1 s, and the
 * stack's principal keys. `name` makes its owner id (`<prefix>-<name>`) unique in the group.
 */
export function executor(
  stack: ExecutorStack,
  built: ChaosPipeline,
  options: Pick<ChaosExecutorOptions, 'bus' | 'logger'> & { readonly name: string },
): GuardedExecutor {
  return chaosExecutor(stack, built, {
    bus: options.bus,
    ownerId: `${stack.prefix}-${options.name}`,
    logger: options.logger,
    maxConcurrency: 24,
  });
}

/** How many keys the outage scenarios spread their calls over. */
export const OUTAGE_KEYS = 30;

/**
 * `count` signed `ledger_append` calls with ids `<prefix>-<tag><i>` (i from `first`), on `keys`
 * keys in turn (`k<i % keys>`, so calls of one key keep their order; default {@link OUTAGE_KEYS}),
 * all under one principal assertion and trace so signing stays cheap.
 */
export async function calls(
  stack: ExecutorStack,
  options: { readonly count: number; readonly tag: string; readonly keys?: number; readonly first?: number },
): Promise<ToolCallRequestedEvent[]> {
  const template = await stack.request({ key: 'k0', seq: 0, ref: 'template' });
  const first = options.first ?? 0;
  const keys = options.keys ?? OUTAGE_KEYS;
  const made: ToolCallRequestedEvent[] = [];
  for (let i = first; i < first + options.count; i++) {
    const callId = `${stack.prefix}-${options.tag}${i}`;
    made.push(
      await stack.request(
        { key: `k${i % keys}`, seq: i, ref: callId },
        { callId, index: i, principalAssertion: template.principalAssertion, traceId: template.traceId },
      ),
    );
  }
  return made;
}

/**
 * What the ledger (one row per tool run, nothing deduplicated) and a set of result events say
 * about `calls`.
 */
export interface LedgerTally {
  readonly calls: number;
  /** Calls with at least one result. */
  readonly answered: number;
  /** Ids of calls without any result. */
  readonly unanswered: string[];
  readonly ledgerRows: number;
  /** Calls the tool ran more than once for. */
  readonly duplicates: number;
  /** Distinct outcomes per call, tallied over the calls. */
  readonly outcomes: Record<string, number>;
  /** Non-success outcomes as `OUTCOME:ERROR_CODE`, one per result event. */
  readonly failureCodes: Record<string, number>;
  /** Calls with an UNRESOLVED dead letter: the reconciler's open cases. */
  readonly openCases: ReadonlySet<string>;
  /** How many ledger rows call `callId` has. */
  ran(callId: string): number;
  /** The outcomes of `callId`'s results, in arrival order (repeats kept). */
  outcomesOf(callId: string): readonly string[];
  /**
   * Answered calls whose answers disagree with the ledger: an applied answer (SUCCESS / DUPLICATE)
   * without exactly one row, applied answers naming different rows or a row that is not the call's,
   * an UNRESOLVED answer without its case, or only failures (refused, errors) next to a row. One line per finding; empty when every answered call is consistent.
   */
  readonly contradictions: string[];
}

const APPLIED = new Set(['SUCCESS', 'DUPLICATE']);

/** The ledger row an applied answer names (the tool's output `row`), if it names one. */
function rowOf(result: ToolCallResultEvent): number | undefined {
  if (result.payloadJson === null) return undefined;
  const row = (JSON.parse(result.payloadJson) as { row?: unknown }).row;
  return typeof row === 'number' ? row : undefined;
}

/** Tallies `results` and `deadLetters` against the ledger rows of `stack` for `calls`. */
export async function tally(
  stack: ExecutorStack,
  calls: readonly ToolCallRequestedEvent[],
  results: readonly ToolCallResultEvent[],
  deadLetters: readonly DeadLetterEvent[],
): Promise<LedgerTally> {
  const rows = await ledgerRows(stack.db.pool);
  const rowsByCall = new Map<string, number>();
  const rowIdsByCall = new Map<string, Set<number>>();
  for (const r of rows) {
    rowsByCall.set(r.callRef, (rowsByCall.get(r.callRef) ?? 0) + 1);
    rowIdsByCall.set(r.callRef, (rowIdsByCall.get(r.callRef) ?? new Set()).add(r.id));
  }
  const outcomesByCall = new Map<string, string[]>();
  const appliedRowsByCall = new Map<string, Set<number | undefined>>();
  const failureCodes: Record<string, number> = {};
  for (const e of results) {
    outcomesByCall.set(e.callId, [...(outcomesByCall.get(e.callId) ?? []), e.outcome]);
    if (APPLIED.has(e.outcome))
      appliedRowsByCall.set(e.callId, (appliedRowsByCall.get(e.callId) ?? new Set()).add(rowOf(e)));
    else {
      const code = `${e.outcome}:${e.error?.code ?? ''}`;
      failureCodes[code] = (failureCodes[code] ?? 0) + 1;
    }
  }
  const openCases = new Set(
    deadLetters.filter((d) => d.reason === 'UNRESOLVED' && d.callId !== null).map((d) => d.callId!),
  );
  const ran = (callId: string): number => rowsByCall.get(callId) ?? 0;
  const outcomes: Record<string, number> = {};
  const unanswered: string[] = [];
  const contradictions: string[] = [];
  for (const { callId } of calls) {
    const seen = outcomesByCall.get(callId) ?? [];
    if (seen.length === 0) {
      unanswered.push(callId);
      continue;
    }
    for (const o of new Set(seen)) outcomes[o] = (outcomes[o] ?? 0) + 1;
    const describe = `${callId}: answered ${seen.join(', ')}, ${ran(callId)} ledger rows`;
    const applied = seen.some((o) => APPLIED.has(o));
    if (applied && ran(callId) !== 1) contradictions.push(describe);
    const named = [...(appliedRowsByCall.get(callId) ?? [])];
    if (named.length > 1 || named.some((row) => row === undefined || !rowIdsByCall.get(callId)?.has(row)))
      contradictions.push(`${describe}, the applied answers name rows ${named.join(' / ')}`);
    if (seen.includes('UNRESOLVED') && !openCases.has(callId)) contradictions.push(`${describe}, no case`);
    if (!applied && !seen.includes('UNRESOLVED') && ran(callId) > 0) contradictions.push(describe);
  }
  return {
    calls: calls.length,
    answered: calls.length - unanswered.length,
    unanswered,
    ledgerRows: rows.length,
    duplicates: [...rowsByCall.values()].filter((n) => n > 1).length,
    outcomes,
    failureCodes,
    openCases,
    ran,
    outcomesOf: (callId) => outcomesByCall.get(callId) ?? [],
    contradictions,
  };
}

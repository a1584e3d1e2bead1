import type {
  DeadLetterEvent,
  ToolCallRequestedEvent,
  ToolCallResultEvent,
} from '../../libs/events/contracts.js';
import type { EventPublisher, KeyedSubscriber } from '../../libs/ports/event-bus.js';
import type { Logger } from '../../libs/ports/logger.js';
import type { GuardedExecutor } from '../../services/executor/create-executor.js';
import { AUDIENCE, ISSUER, PARTITIONS, type ExecutorStack } from '../integration/executor/executor-stack.js';
import { ledgerRows } from '../integration/executor/ledger-tools.js';
import { testExecutor } from '../integration/executor/test-parts.js';
import type { ChaosPipeline } from './chaos-pipeline.js';

/**
 * What the in-process outage scenarios (a Redis master failover, a Kafka broker restart, a Kafka
 * leader failover) share: executors built the same way over a scenario's bus and pipeline, calls of
 * the suite's ledger tool, and one tally of what the ledger and the result topic say about them.
 */

/**
 * An in-process executor of `stack`'s group (`<prefix>-executors`), as the outage scenarios run it:
 * built by `createExecutor` (`testExecutor`) from the chaos parts (tools, stores, the scenario's
 * shared breakers), 24 calls at once, a redelivery backoff of 50 ms doubling to 1 s, and the
 * stack's principal keys. `name` makes its owner id (`<prefix>-<name>`) unique in the group.
 */
export function ledgerExecutor(
  stack: ExecutorStack,
  built: ChaosPipeline,
  options: {
    /** Where it consumes and publishes: the stack's bus, or one on a scenario's own servers. */
    readonly bus: EventPublisher & KeyedSubscriber;
    readonly name: string;
    readonly logger: Logger;
  },
): GuardedExecutor {
  return testExecutor({
    ...built,
    bus: options.bus,
    codec: stack.codec,
    topics: stack.topics,
    resultsPartitions: PARTITIONS.results,
    jwks: stack.jwks,
    issuer: ISSUER,
    audience: AUDIENCE,
    logger: options.logger,
    ownerId: `${stack.prefix}-${options.name}`,
    groupId: `${stack.prefix}-executors`,
    settings: { maxConcurrency: 24 },
    backoff: { baseDelayMs: 50, maxDelayMs: 1_000 },
  });
}

/**
 * `count` signed `ledger_append` calls with ids `<prefix>-<tag><i>` (i from `first`), on `keys`
 * keys in turn (`k<i % keys>`, so calls of one key keep their order), all under one principal
 * assertion and trace so signing stays cheap.
 */
export async function ledgerCalls(
  stack: ExecutorStack,
  options: { readonly count: number; readonly keys: number; readonly tag: string; readonly first?: number },
): Promise<ToolCallRequestedEvent[]> {
  const template = await stack.request({ key: 'k0', seq: 0, ref: 'template' });
  const first = options.first ?? 0;
  const calls: ToolCallRequestedEvent[] = [];
  for (let i = first; i < first + options.count; i++) {
    const callId = `${stack.prefix}-${options.tag}${i}`;
    calls.push(
      await stack.request(
        { key: `k${i % options.keys}`, seq: i, ref: callId },
        { callId, index: i, principalAssertion: template.principalAssertion, traceId: template.traceId },
      ),
    );
  }
  return calls;
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
export async function tallyLedger(
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

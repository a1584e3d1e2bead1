import type { Principal, ToolCallResult } from '../core/types.js';
import type { ProviderMessages, ProviderTurn } from '../providers/provider-shapes.js';

/** The coordinates of one turn of one agent task, as the SDK's `runTurn` takes them. */
export interface TurnCoordinates {
  /** Who the agent acts as; the SDK signs it into every call of the turn. */
  readonly principal: Principal;
  readonly taskId: string;
  /** The agent loop's step (round) within the task; with taskId, it fixes the idempotency keys. */
  readonly step: number;
}

/**
 * How the agent loop builds the coordinates of one turn from the fixture's. The default passes
 * them through; a test swaps it to model an agent loop that gets them wrong.
 */
export type TurnContextFor = (base: TurnCoordinates, round: number) => TurnCoordinates;

/**
 * Reads one fact of the world behind the tools for a fixture's `after` expectations: the value of
 * the fact for `subject` (an order id, a ticket id...) as `principal` (the fixture's caller, e.g.
 * for its tenant) would find it. The result is compared with the fixture's value by deep equality,
 * so return plain JSON (numbers, strings, booleans, arrays, objects).
 */
export type WorldFact = (subject: string, principal: Principal) => unknown;

/**
 * What the harness can observe of the services behind the tools, beyond what toolgate answers. Both
 * parts are optional; a fixture expectation that needs a part the harness lacks fails the run with
 * a sentence saying so (it is neither skipped nor a crash).
 */
export interface HarnessWorld {
  /**
   * Requests received so far per downstream operation, keyed `<downstream>.<operation>` (e.g.
   * `payments.refund`), every operation listed even at 0 so a misspelt name in a fixture is
   * reported as unknown. Counts only grow; the harness reads them before and after each round and
   * checks the difference against the round's `downstreamRequests`.
   */
  requestCounts?(): Readonly<Record<string, number>>;
  /** The facts a fixture's `after` may name, by name (e.g. `ledgerRows`); see {@link WorldFact}. */
  readonly facts?: Readonly<Record<string, WorldFact>>;
}

/** One requested call of a turn as the SDK reports it (the SDK's `TurnCall` has this shape). */
export interface TurnCallRecord {
  readonly providerCallId: string;
  readonly tool: string;
  /** Absent for a call answered without publishing (it has no call id and no idempotency key). */
  readonly published?: { readonly callId: string; readonly idempotencyKey: string };
}

/** What one turn produced: the provider messages to append, and one result and call per request. */
export type TurnRecord = ProviderMessages & {
  /** One per requested call, in request order. */
  readonly results: readonly ToolCallResult[];
  readonly calls: readonly TurnCallRecord[];
};

/**
 * The running toolgate a fixture is replayed on, as far as `runFixture` uses it: the embedded
 * toolgate (`createEmbeddedToolgate`, which `createAgentHarness` starts) has this shape.
 */
export interface FixtureToolgate {
  readonly client: {
    /** Runs the tool calls of one assistant response and answers every one of them. */
    runTurn(turn: ProviderTurn, ctx: TurnCoordinates, options: { timeoutMs: number }): Promise<TurnRecord>;
  };
  /** Resolves once every call id has its audit record; rejects after `timeoutMs`. */
  awaitAudited(callIds: readonly string[], timeoutMs: number): Promise<void>;
}

/** What `runFixture` replays a fixture on (`createAgentHarness` returns one). */
export interface FixtureHarness {
  readonly toolgate: FixtureToolgate;
  /** The callers a fixture may name in `principal`. */
  readonly principals: Readonly<Record<string, Principal>>;
  readonly world: HarnessWorld | undefined;
  readonly turnContext: TurnContextFor;
  /** Per-turn deadline, ms. */
  readonly turnTimeoutMs: number;
  /** A task id prefix unique to this harness, so fixture runs never share idempotency keys by accident. */
  readonly runId: string;
}

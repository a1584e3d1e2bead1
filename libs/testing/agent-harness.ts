import type { Catalog } from '../catalog/catalog.js';
import type { Principal } from '../core/types.js';
import {
  createEmbeddedToolgate,
  type EmbeddedToolgate,
  type EmbeddedToolgateOptions,
} from '../../services/embedded/create-embedded-toolgate.js';
import type { TurnContext } from '../../services/sdk/index.js';

/**
 * How the agent loop builds the context of one turn from the fixture's coordinates. The default
 * passes them through; a test swaps it to model an agent loop that gets them wrong.
 */
export type TurnContextFor = (base: TurnContext, round: number) => TurnContext;

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

/** What the harness adds to how the embedded toolgate runs. */
export interface AgentHarnessExtras {
  /**
   * The callers a fixture may name in `principal` (a fixture may also write one out in full).
   * Default: none. A name not in here rejects the run with the names that are.
   */
  readonly principals?: Readonly<Record<string, Principal>>;
  /** See {@link HarnessWorld}. Default: none (fixtures may not count requests or check facts). */
  readonly world?: HarnessWorld;
  /** See {@link TurnContextFor}. Default: the identity. */
  readonly turnContext?: TurnContextFor;
  /** Per-turn deadline, ms (default 10 000). */
  readonly turnTimeoutMs?: number;
}

/**
 * What to run and how, exactly as `createEmbeddedToolgate` takes it — `{ tools, policy?,
 * downstreamLimits? }` or `{ catalog }`, with `clock`, `executors`, `logger`... — plus
 * {@link AgentHarnessExtras}.
 */
export type AgentHarnessOptions<C extends Catalog = Catalog> = EmbeddedToolgateOptions<C> &
  AgentHarnessExtras;

/** A running in-process toolgate to replay fixtures against; see {@link createAgentHarness}. */
export interface AgentHarness<C extends Catalog = Catalog> {
  /** The whole topology: SDK client, executors, audit sink, reconciler, the catalog. */
  readonly toolgate: EmbeddedToolgate<C>;
  readonly principals: Readonly<Record<string, Principal>>;
  readonly world: HarnessWorld | undefined;
  readonly turnContext: TurnContextFor;
  readonly turnTimeoutMs: number;
  /** A task id prefix unique to this harness, so fixture runs never share idempotency keys by accident. */
  readonly runId: string;
  /** Stops the toolgate (and closes its catalog). Idempotent. */
  stop(): Promise<void>;
}

let harnesses = 0;

/**
 * Starts `createEmbeddedToolgate` over the given tools or catalog (memory bus with the real event
 * codec, executors running the guard pipeline, audit sink, reconciler, SDK client) for fixture
 * replay. Nothing listens on a port and nothing leaves the process. Throws what
 * `createEmbeddedToolgate` throws (`ToolDefinitionError` for an invalid tool). Give each fixture its
 * own harness when fixtures change the same state behind the tools: that state lives as long as the
 * tools do.
 *
 * ```ts
 * const harness = await createAgentHarness({ tools: [closeTicket], principals: { ann } });
 * ```
 */
export async function createAgentHarness<C extends Catalog = Catalog>(
  options: AgentHarnessOptions<C>,
): Promise<AgentHarness<C>> {
  const { principals, world, turnContext, turnTimeoutMs, ...run } = options;
  const toolgate = createEmbeddedToolgate<C>(run);
  try {
    await toolgate.start();
  } catch (err) {
    await toolgate.stop();
    throw err;
  }
  harnesses += 1;
  return {
    toolgate,
    principals: principals ?? {},
    world,
    turnContext: turnContext ?? ((base) => base),
    turnTimeoutMs: turnTimeoutMs ?? 10_000,
    runId: `h${process.pid.toString(36)}-${harnesses}-${Date.now().toString(36)}`,
    stop: () => toolgate.stop(),
  };
}

import type { Catalog } from '../../libs/catalog/catalog.js';
import type { Principal } from '../../libs/core/types.js';
import type { FixtureHarness, HarnessWorld, TurnContextFor } from '../../libs/testing/fixture-harness.js';
import {
  createEmbeddedToolgate,
  type EmbeddedToolgate,
  type EmbeddedToolgateOptions,
} from './create-embedded-toolgate.js';

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

/**
 * A running in-process toolgate to replay fixtures against (`runFixture`); see
 * {@link createAgentHarness}.
 */
export interface AgentHarness<C extends Catalog = Catalog> extends FixtureHarness {
  /** The whole topology: SDK client, executors, audit sink, reconciler, the catalog. */
  readonly toolgate: EmbeddedToolgate<C>;
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

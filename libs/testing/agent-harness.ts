import type { Principal } from '../core/types.js';
import type { StoreCatalog } from '../../services/catalog/store-catalog.js';
import { DEMO_PRINCIPALS } from '../../services/demo/principals.js';
import {
  createEmbeddedStore,
  type EmbeddedStore,
  type EmbeddedStoreOptions,
} from '../../services/demo/embedded-store.js';
import type { TurnContext } from '../../services/sdk/index.js';

/** The callers fixtures may name: the refund story's principals (tenant t1). */
export const FIXTURE_PRINCIPALS: Readonly<Record<'ana' | 'ben' | 'supportDesk', Principal>> = DEMO_PRINCIPALS;

/**
 * How the agent loop builds the context of one turn from the fixture's coordinates. The default
 * passes them through; a test swaps it to model an agent loop that gets them wrong.
 */
export type TurnContextFor = (base: TurnContext, round: number) => TurnContext;

export interface AgentHarnessOptions {
  /** Passed to createEmbeddedStore (clock, executors, downstreams, logger...). */
  readonly toolgate?: EmbeddedStoreOptions;
  /**
   * Changes the catalog before anything starts: e.g. registers a new tool version, the way a
   * deployment would. Tests use it to put a schema regression in front of the fixtures.
   */
  readonly alterCatalog?: (catalog: StoreCatalog) => void;
  /** See {@link TurnContextFor}. Default: the identity. */
  readonly turnContext?: TurnContextFor;
  /** Per-turn deadline, ms (default 10 000). */
  readonly turnTimeoutMs?: number;
}

/** A running in-process toolgate to replay fixtures against; see {@link createAgentHarness}. */
export interface AgentHarness {
  /** The whole topology: SDK client, executors, audit sink, reconciler, fake store services. */
  readonly toolgate: EmbeddedStore;
  readonly turnContext: TurnContextFor;
  readonly turnTimeoutMs: number;
  /** A task id prefix unique to this harness, so fixture runs never share idempotency keys by accident. */
  readonly runId: string;
  stop(): Promise<void>;
}

let harnesses = 0;

/**
 * Starts the embedded toolgate (memory bus with the real event codec, executors running the guard
 * pipeline over the store catalog and in-memory fake services, audit sink, reconciler, SDK client)
 * for fixture replay. Nothing listens on a port and nothing leaves the process. Give each fixture
 * its own harness when fixtures touch the same orders: the fake services keep their ledger for the
 * harness's lifetime.
 */
export async function createAgentHarness(options: AgentHarnessOptions = {}): Promise<AgentHarness> {
  const toolgate = createEmbeddedStore(options.toolgate ?? {});
  options.alterCatalog?.(toolgate.catalog);
  await toolgate.start();
  harnesses += 1;
  return {
    toolgate,
    turnContext: options.turnContext ?? ((base) => base),
    turnTimeoutMs: options.turnTimeoutMs ?? 10_000,
    runId: `h${process.pid.toString(36)}-${harnesses}-${Date.now().toString(36)}`,
    stop: () => toolgate.stop(),
  };
}

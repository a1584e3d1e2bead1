import type pg from 'pg';
import { createPolicyEngine } from '../policy/policy-engine.js';
import type { PolicyEngine } from '../pipeline/deps.js';
import type { Clock } from '../core/clock.js';
import type { BucketLimit } from '../ports/rate-limiter.js';
import type { AnyToolDefinition } from '../registry/tool-definition.js';
import { ToolRegistry } from '../registry/tool-registry.js';

/**
 * What an executor runs calls against: the tools (with their implementations), the business rules,
 * and each downstream's outbound rate limit. Made with {@link defineCatalog}, or built at start-up
 * by a {@link CatalogFactory} when the tools need the process's resources.
 */
export interface Catalog {
  readonly registry: ToolRegistry;
  readonly policy: PolicyEngine;
  /**
   * A candidate policy the executors judge every call with beside `policy`, recording what it would
   * decide (audit record, `toolgate_policy_shadow_disagreements_total`) and never acting on it.
   */
  readonly shadowPolicy?: PolicyEngine;
  /** Outbound budget per downstream (the tools' `downstream` names); unlisted ones are not limited. */
  readonly downstreamLimits: Readonly<Record<string, BucketLimit>>;
  /** Releases what the catalog holds (its own clients, timers); called once on shutdown. */
  close?(): Promise<void>;
}

/** What a catalog factory may use. The executor owns (and ends) what it hands out. */
export interface CatalogEnv {
  readonly clock: Clock;
  /**
   * The executor's Postgres pool (DATABASE_URL), opened — and toolgate's schema migrated — on the
   * first call only, so a catalog that never calls it needs no database. Rejects with a message
   * naming DATABASE_URL when it is not set.
   */
  postgres(): Promise<pg.Pool>;
}

/** Builds the catalog; rejects when it cannot (the executor then does not start). */
export type CatalogFactory = (env: CatalogEnv) => Catalog | Promise<Catalog>;

/** A tool definition of any input and output type (see `registry/tool-definition.ts`). */
export type { AnyToolDefinition } from '../registry/tool-definition.js';

/** What {@link defineCatalog} takes: the tools, and optionally their rules and outbound limits. */
export interface CatalogDefinition {
  /** Every tool (and version) the executor runs. Names and versions must be unique. */
  readonly tools: readonly AnyToolDefinition[];
  /**
   * The business rules (stage 4), e.g. `createPolicyEngine({ version: 'v1', cedar }, tools)`.
   * Default: no rules, so every call the tools' schemas, scopes and `authorize` admit passes stage 4.
   */
  readonly policy?: PolicyEngine;
  /** A candidate policy run in shadow beside `policy` (see {@link Catalog.shadowPolicy}). */
  readonly shadowPolicy?: PolicyEngine;
  /** Outbound budget per downstream name. Default: none limited. */
  readonly downstreamLimits?: Readonly<Record<string, BucketLimit>>;
  /** Called once when the executor stops (close the clients the tools use). */
  readonly close?: () => Promise<void>;
}

/** The version of the empty rule set {@link defineCatalog} uses when no policy is given. */
export const NO_RULES_POLICY_VERSION = 'no-rules';

/**
 * A catalog from a list of tools (each made with `defineTool`). Throws `ToolDefinitionError` when
 * a tool is invalid or a name@version appears twice. The result is what `createExecutor`,
 * `createEmbeddedToolgate` and the executor's catalog module (`export default defineCatalog(...)`)
 * take.
 */
export function defineCatalog(definition: CatalogDefinition): Catalog {
  const registry = new ToolRegistry();
  for (const tool of definition.tools) registry.register(tool);
  return {
    registry,
    policy: definition.policy ?? createPolicyEngine({ version: NO_RULES_POLICY_VERSION }, []),
    ...(definition.shadowPolicy === undefined ? {} : { shadowPolicy: definition.shadowPolicy }),
    downstreamLimits: Object.freeze({ ...definition.downstreamLimits }),
    ...(definition.close === undefined ? {} : { close: definition.close }),
  };
}

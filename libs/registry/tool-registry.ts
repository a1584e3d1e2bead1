import type { ToolgateError } from '../core/errors.js';
import type { Principal } from '../core/types.js';
import { ToolDefinitionError } from './definition-error.js';
import { deprecatedError, unknownToolError, unknownVersionError } from './resolution-errors.js';
import { compareSemver } from './semver.js';
import type { ToolDefinition, ToolInvocation } from './tool-definition.js';
import { assertValidDefinition } from './validate-definition.js';

/** The outcome of {@link ToolRegistry.resolve}; never throws for an unknown or refused tool. */
export type ResolveResult =
  | { readonly ok: true; readonly tool: ToolDefinition }
  | { readonly ok: false; readonly error: ToolgateError };

/** Per-registration settings of {@link ToolRegistry.register}. */
export interface RegisterOptions {
  /**
   * Tenants allowed to see and call this version. Absent: every tenant. A restricted version is
   * invisible elsewhere: not offered, not resolvable, not suggested (e.g. a per-tenant integration,
   * or a canary v2 for one tenant while the others stay on v1).
   */
  readonly tenants?: readonly string[];
}

/** Extra settings of {@link ToolRegistry.overrideForTenant}. */
export interface TenantOverrideOptions {
  /** Breaker/limiter group of the tenant's implementation, when it calls a different downstream. */
  readonly downstream?: string;
}

/** One registered version, for operations (listing, dashboards, audits of who may see what). */
export interface RegistryEntryInfo {
  readonly name: string;
  readonly version: string;
  readonly owner: string;
  readonly scopes: readonly string[];
  readonly destructive: boolean;
  readonly stateChanging: boolean;
  readonly deprecated?: { readonly reason: string; readonly useInstead?: string };
  readonly tenants?: readonly string[];
  /** Tenants with an overriding implementation of this version. */
  readonly overriddenFor: readonly string[];
}

interface Entry {
  def: ToolDefinition;
  readonly tenants: ReadonlySet<string> | undefined;
}

interface Override {
  readonly execute: ToolDefinition['execute'];
  readonly downstream?: string;
  /** The merged definition, rebuilt when the base changes (deprecation replaces it). */
  cached?: { readonly base: ToolDefinition; readonly merged: ToolDefinition };
}

const entryKey = (name: string, version: string): string => `${name}@${version}`;

function visibleTo(entry: Entry, tenant: string): boolean {
  return entry.tenants === undefined || entry.tenants.has(tenant);
}

/** Highest non-deprecated version among `entries`, if any. */
function currentOf(entries: readonly Entry[]): Entry | undefined {
  let best: Entry | undefined;
  for (const e of entries) {
    if (e.def.deprecated !== undefined) continue;
    if (best === undefined || compareSemver(e.def.version, best.def.version) > 0) best = e;
  }
  return best;
}

/**
 * The single source of truth for which tools exist, in which versions, for whom.
 *
 * - Versions: several versions of a name coexist; name+version is unique. The "current" version is
 *   the highest non-deprecated one visible to the tenant. A call pinned to a version is resolved to
 *   exactly that version (and so validated by its schema), so a schema change never catches an
 *   in-flight conversation mid-task. A deprecated version is refused with its reason; to give
 *   callers a window, register the successor first (it becomes current and is what is offered) and
 *   deprecate the old version when the window ends.
 * - Tenants: a version may be restricted to some tenants; a tenant may override a version's
 *   implementation (and downstream) without changing anything the model sees.
 * - Principals: {@link forPrincipal} offers one current version per name, only when the principal
 *   holds all of its scopes.
 *
 * Meant to be filled at startup and read on every call; registration after startup is allowed and
 * takes effect for the next resolve.
 */
export class ToolRegistry {
  readonly #byName = new Map<string, Map<string, Entry>>();
  /** tenant → name@version → override. */
  readonly #overrides = new Map<string, Map<string, Override>>();

  /**
   * Adds one tool version. Validates the definition (ToolDefinitionError on any problem) and throws
   * ToolDefinitionError when this name+version is already registered: a version is immutable.
   */
  register<I, O>(definition: ToolDefinition<I, O>, options: RegisterOptions = {}): void {
    assertValidDefinition(definition);
    const def = definition as unknown as ToolDefinition;
    if (options.tenants !== undefined && (options.tenants.length === 0 || options.tenants.some((t) => !t))) {
      throw new ToolDefinitionError(def.name, [
        'tenants, when given, must be a non-empty list of tenant ids.',
      ]);
    }
    let versions = this.#byName.get(def.name);
    if (versions?.has(def.version)) {
      throw new ToolDefinitionError(def.name, [
        `version ${def.version} is already registered; register a new version instead of changing one in place.`,
      ]);
    }
    if (versions === undefined) {
      versions = new Map();
      this.#byName.set(def.name, versions);
    }
    const tenants = options.tenants === undefined ? undefined : new Set(options.tenants);
    versions.set(def.version, { def, tenants });
  }

  /** Marks a registered version deprecated from now on. Throws when it is not registered. */
  deprecate(
    name: string,
    version: string,
    deprecation: { readonly reason: string; readonly useInstead?: string },
  ): void {
    const entry = this.#entry(name, version);
    const next = Object.freeze({ ...entry.def, deprecated: Object.freeze({ ...deprecation }) });
    assertValidDefinition(next);
    entry.def = next;
  }

  /**
   * Runs `execute` (and, if given, reports `downstream`) instead of the registered implementation
   * for calls from `tenant` to this exact version. Schema, description, scopes and every guard
   * setting stay those of the registered version, so exports are identical across tenants. The
   * implementation is trusted to take the version's validated input (`I`) and return its output; its
   * output still passes the version's output validation. Replaces an earlier override of the same
   * tenant+version. Throws when the version is not registered or not visible to the tenant.
   */
  overrideForTenant<I, O>(
    tenant: string,
    name: string,
    version: string,
    execute: (args: I, inv: ToolInvocation) => Promise<O>,
    options: TenantOverrideOptions = {},
  ): void {
    const entry = this.#entry(name, version);
    if (!visibleTo(entry, tenant)) {
      throw new ToolDefinitionError(name, [`version ${version} is not available to tenant '${tenant}'.`]);
    }
    let forTenant = this.#overrides.get(tenant);
    if (forTenant === undefined) {
      forTenant = new Map();
      this.#overrides.set(tenant, forTenant);
    }
    forTenant.set(entryKey(name, version), {
      execute: execute as unknown as ToolDefinition['execute'],
      ...(options.downstream !== undefined && { downstream: options.downstream }),
    });
  }

  /**
   * The definition a call to `name` (pinned to `version`, or the current one) from `tenant` runs
   * against, with the tenant's override applied. Never throws: an unknown name gives UNKNOWN_TOOL
   * with the closest names this tenant can call; an unknown version gives UNKNOWN_TOOL listing the
   * available ones; a deprecated version (or a name whose versions are all deprecated) gives
   * TOOL_DEPRECATED with its reason and replacement.
   */
  resolve(name: string, opts: { readonly version?: string; readonly tenant: string }): ResolveResult {
    const { tenant, version } = opts;
    const visible = [...(this.#byName.get(name)?.values() ?? [])].filter((e) => visibleTo(e, tenant));
    if (visible.length === 0)
      return { ok: false, error: unknownToolError(name, this.#callableNames(tenant)) };
    let chosen: Entry | undefined;
    if (version !== undefined) {
      chosen = visible.find((e) => e.def.version === version);
      if (chosen === undefined) {
        const available = visible
          .map((e) => ({ version: e.def.version, deprecated: e.def.deprecated !== undefined }))
          .sort((a, b) => compareSemver(a.version, b.version));
        return { ok: false, error: unknownVersionError(name, version, available) };
      }
    } else {
      chosen =
        currentOf(visible) ??
        visible.reduce((a, b) => (compareSemver(a.def.version, b.def.version) >= 0 ? a : b));
    }
    if (chosen.def.deprecated !== undefined) {
      const replacement = chosen.def.deprecated.useInstead?.split('@')[0];
      const replacementVisible = replacement !== undefined && this.#callableNames(tenant).has(replacement);
      return { ok: false, error: deprecatedError(chosen.def, replacementVisible) };
    }
    return { ok: true, tool: this.#withOverride(chosen.def, tenant) };
  }

  /**
   * The tools to offer this principal, one current version per name, sorted by name (a stable list
   * keeps provider prompt caches warm): visible to its tenant, not deprecated, and every scope of
   * the tool held by the principal. Tenant overrides are applied.
   */
  forPrincipal(principal: Principal): ToolDefinition[] {
    const held = new Set(principal.scopes);
    const offered: ToolDefinition[] = [];
    for (const versions of this.#byName.values()) {
      const current = currentOf([...versions.values()].filter((e) => visibleTo(e, principal.tenant)));
      if (current === undefined || !current.def.scopes.every((s) => held.has(s))) continue;
      offered.push(this.#withOverride(current.def, principal.tenant));
    }
    return offered.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Every registered definition (each version, as registered, without tenant overrides), sorted by
   * name then version: what a policy is checked against (`createPolicyEngine(source, tools)`).
   */
  definitions(): ToolDefinition[] {
    return [...this.#byName.values()]
      .flatMap((versions) => [...versions.values()].map((e) => e.def))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : compareSemver(a.version, b.version)));
  }

  /** Every registered version, sorted by name then version, for operations. */
  list(): RegistryEntryInfo[] {
    const rows: RegistryEntryInfo[] = [];
    for (const versions of this.#byName.values()) {
      for (const { def, tenants } of versions.values()) {
        const overriddenFor = [...this.#overrides]
          .filter(([, m]) => m.has(entryKey(def.name, def.version)))
          .map(([tenant]) => tenant)
          .sort();
        rows.push({
          name: def.name,
          version: def.version,
          owner: def.owner,
          scopes: def.scopes,
          destructive: def.destructive,
          stateChanging: def.stateChanging,
          ...(def.deprecated !== undefined && { deprecated: def.deprecated }),
          ...(tenants !== undefined && { tenants: [...tenants].sort() }),
          overriddenFor,
        });
      }
    }
    return rows.sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : compareSemver(a.version, b.version),
    );
  }

  #entry(name: string, version: string): Entry {
    const entry = this.#byName.get(name)?.get(version);
    if (entry === undefined) throw new ToolDefinitionError(name, [`version ${version} is not registered.`]);
    return entry;
  }

  /** Names this tenant can call now: at least one visible, non-deprecated version. */
  #callableNames(tenant: string): Set<string> {
    const names = new Set<string>();
    for (const [name, versions] of this.#byName) {
      for (const e of versions.values()) {
        if (visibleTo(e, tenant) && e.def.deprecated === undefined) {
          names.add(name);
          break;
        }
      }
    }
    return names;
  }

  #withOverride(def: ToolDefinition, tenant: string): ToolDefinition {
    const override = this.#overrides.get(tenant)?.get(entryKey(def.name, def.version));
    if (override === undefined) return def;
    if (override.cached?.base !== def) {
      const merged: ToolDefinition = Object.freeze({
        ...def,
        execute: override.execute,
        ...(override.downstream !== undefined && { downstream: override.downstream }),
      });
      override.cached = { base: def, merged };
    }
    return override.cached.merged;
  }
}

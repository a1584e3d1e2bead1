import { defineCatalog, NO_RULES_POLICY_VERSION } from '../catalog/catalog.js';
import type { AnyToolDefinition, Catalog, CatalogFactory } from '../catalog/catalog.js';
import type { PolicyEngine } from '../pipeline/deps.js';
import { createPolicyEngine } from '../policy/policy-engine.js';
import type { BucketLimit } from '../ports/rate-limiter.js';
import { connectMcpUpstream, type McpUpstream } from './connect.js';
import type { McpUpstreamOptions, QuarantinedTool } from './options.js';
import { changedToolMessage, PIN_RULE_ID } from './upstream-errors.js';

/** What {@link mcpUpstreamCatalog} builds a catalog from. */
export interface McpUpstreamCatalogOptions {
  /** The upstream MCP servers; their names must be unique. */
  readonly upstreams: readonly McpUpstreamOptions[];
  /** Tools of your own served alongside the imported ones. Default none. */
  readonly tools?: readonly AnyToolDefinition[];
  /** Business rules for every tool. Default: none. Changed upstream tools are refused before them. */
  readonly policy?: PolicyEngine;
  /** Outbound limits of other downstreams; an upstream's own comes from its `outboundLimit`. */
  readonly downstreamLimits?: Readonly<Record<string, BucketLimit>>;
  /**
   * Fail instead of starting when any named tool is quarantined at connect (the executor then does
   * not start, and the error lists every quarantined tool with its digests). Default false.
   */
  readonly requireAllTools?: boolean;
  /**
   * Hears of the tools quarantined at connect, once per upstream that has any. Default: one line
   * per upstream on stderr, with each tool's reason and digests.
   */
  readonly onQuarantine?: (upstream: string, tools: readonly QuarantinedTool[]) => void;
}

/** A catalog made of upstream MCP servers: the usual catalog, plus the connected upstreams. */
export interface McpUpstreamCatalog extends Catalog {
  /** The connected upstreams, e.g. to call `refresh()` or read `blocked()`. */
  readonly upstreams: readonly McpUpstream[];
  /** Closes every upstream client (ending stdio upstream processes); never rejects. */
  close(): Promise<void>;
}

/**
 * A {@link CatalogFactory} serving the tools of one or more upstream MCP servers (plus any tools of
 * your own) through toolgate's guard pipeline: a catalog module can be just
 * `export default mcpUpstreamCatalog({ upstreams: [...] })`.
 *
 * The factory connects every upstream in parallel ({@link connectMcpUpstream}) and builds the
 * catalog of their imported tools. Contract:
 * - Each upstream's `outboundLimit` becomes the downstream limit of its name.
 * - The policy refuses a call to an imported tool whose upstream definition changed (found by a
 *   refresh) at the business-rules stage, with POLICY_VIOLATION rule {@link PIN_RULE_ID} — before
 *   the idempotency claim and execution; the given `policy` decides every other call. The tool's
 *   own execute check stays as the backstop for a change found in between.
 * - `close()` closes every upstream client (ending stdio upstream processes).
 * - Rejects, after closing every upstream it had connected, when an upstream cannot be connected,
 *   two upstreams share a name, a tool name appears twice, or `requireAllTools` is set and a
 *   named tool is quarantined.
 */
export function mcpUpstreamCatalog(options: McpUpstreamCatalogOptions): CatalogFactory {
  return async (): Promise<McpUpstreamCatalog> => {
    const names = options.upstreams.map((u) => u.name);
    const duplicate = names.find((name, i) => names.indexOf(name) !== i);
    if (duplicate !== undefined)
      throw new Error(`mcp upstream catalog: two upstreams are named ${duplicate}`);

    const settled = await Promise.allSettled(options.upstreams.map((u) => connectMcpUpstream(u)));
    const upstreams = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const closeAll = async (): Promise<void> => {
      await Promise.allSettled(upstreams.map((u) => u.close()));
    };
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed !== undefined) {
      await closeAll();
      throw failed.reason;
    }

    const report = options.onQuarantine ?? reportToStderr;
    const quarantined = upstreams.filter((u) => u.quarantined.length > 0);
    for (const u of quarantined) {
      try {
        report(u.name, u.quarantined);
      } catch {
        // A reporting hook must not stop the executor.
      }
    }
    if (options.requireAllTools === true && quarantined.length > 0) {
      await closeAll();
      throw new Error(
        `mcp upstream catalog: quarantined tools (requireAllTools): ${quarantined
          .flatMap((u) => u.quarantined.map((q) => describe(u.name, q)))
          .join('; ')}`,
      );
    }

    let catalog: Catalog;
    try {
      catalog = defineCatalog({
        tools: [...upstreams.flatMap((u) => u.tools), ...(options.tools ?? [])],
        policy: pinnedSchemaPolicy(
          options.policy ?? createPolicyEngine({ version: NO_RULES_POLICY_VERSION }, []),
          upstreams,
        ),
        downstreamLimits: {
          ...options.downstreamLimits,
          ...Object.fromEntries(
            options.upstreams.flatMap((u) =>
              u.outboundLimit === undefined ? [] : [[u.name, u.outboundLimit]],
            ),
          ),
        },
      });
    } catch (err) {
      await closeAll();
      throw err;
    }
    return { ...catalog, upstreams, close: closeAll };
  };
}

/**
 * `base`, preceded by one rule: a call to an imported tool that is blocked because its upstream
 * definition changed is refused (no alternative, so not retryable). The version is `base`'s.
 */
export function pinnedSchemaPolicy(base: PolicyEngine, upstreams: readonly McpUpstream[]): PolicyEngine {
  return {
    version: base.version,
    factsOf: (tool) => base.factsOf(tool),
    ...(base.argumentsRead === undefined
      ? {}
      : { argumentsRead: (tool: string) => base.argumentsRead!(tool) }),
    evaluate(tool, args, ctx, facts) {
      for (const upstream of upstreams) {
        if (tool.downstream !== upstream.name) continue;
        if (upstream.blockedTool(tool.name) !== undefined) {
          return { allowed: false, ruleId: PIN_RULE_ID, reason: changedToolMessage(tool.name) };
        }
      }
      return base.evaluate(tool, args, ctx, facts);
    },
  };
}

function describe(upstream: string, q: QuarantinedTool): string {
  const digests = [
    q.expectedDigest === undefined ? '' : ` expected ${q.expectedDigest}`,
    q.actualDigest === undefined ? '' : ` actual ${q.actualDigest}`,
  ].join('');
  return `${upstream}/${q.upstreamName} as ${q.name}: ${q.reason} (${q.detail})${digests}`;
}

function reportToStderr(upstream: string, tools: readonly QuarantinedTool[]): void {
  process.stderr.write(
    `${JSON.stringify({
      level: 'warn',
      msg: 'mcp upstream tools quarantined: not served until pinned',
      upstream,
      tools,
    })}\n`,
  );
}

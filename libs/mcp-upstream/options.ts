import type { Secret } from '../integrations/secret.js';
import type { BucketLimit } from '../ports/rate-limiter.js';
import type { RateLimitSpec } from '../registry/tool-definition.js';

/**
 * How toolgate reaches the upstream MCP server.
 *
 * - `stdio`: toolgate starts `command` with `args` and speaks MCP over its stdin/stdout. The child
 *   gets `env` if given, otherwise only the MCP client's safe default environment (PATH, HOME, …),
 *   never toolgate's own secrets. Its stderr goes where `stderr` says (default `inherit`).
 * - `streamable-http`: MCP over HTTP POST at `url`. The only credentials sent are the ones written
 *   here: `headers` and `bearerToken` (sent as `Authorization: Bearer …`). Nothing of a call — not
 *   the caller's principal, its assertion, its delegation reference or any header it came with —
 *   is ever added to an upstream request.
 */
export type McpUpstreamTransport =
  | {
      readonly kind: 'stdio';
      readonly command: string;
      readonly args?: readonly string[];
      readonly env?: Readonly<Record<string, string>>;
      readonly cwd?: string;
      readonly stderr?: 'inherit' | 'ignore' | 'pipe';
    }
  | {
      readonly kind: 'streamable-http';
      readonly url: string | URL;
      /** Static headers sent on every request to the upstream (e.g. an API key header). */
      readonly headers?: Readonly<Record<string, string>>;
      /**
       * The upstream's own credential: a fixed token, or a function asked before every request (a
       * token provider that refreshes). Sent as `Authorization: Bearer <token>`.
       */
      readonly bearerToken?: Secret | (() => Promise<string>);
    };

/**
 * Retries of an imported tool. toolgate's execute stage retries only transient failures (the
 * upstream timed out or failed on its side) and only when repeating cannot apply the effect twice.
 */
export interface McpUpstreamRetry {
  /**
   * Total attempts including the first. Default 3 for a tool that is safe to retry (read-only, or
   * `upstreamDeduplicates`), 1 otherwise; more than 1 on a state-changing tool requires
   * `upstreamDeduplicates` (the tool is quarantined as an invalid definition otherwise).
   */
  readonly maxAttempts?: number;
  /**
   * The operator's statement that the upstream tool deduplicates repeated calls carrying the same
   * idempotency key, which every call sends in `_meta["io.toolgate/idempotency-key"]` (retrySafety
   * `forwards-key`). Only then is a state-changing tool retried. Default false.
   */
  readonly upstreamDeduplicates?: boolean;
}

/**
 * What the operator decides about one upstream tool. Only tools named in
 * {@link McpUpstreamOptions.tools} are imported; nothing the upstream says about itself (its
 * annotations such as `readOnlyHint`, `destructiveHint`, `idempotentHint`) decides any of this.
 */
export interface McpUpstreamToolSettings {
  /**
   * The schema digest ({@link mcpToolDigest}) the operator reviewed and accepted. A tool without a
   * pin, or whose current digest differs, is quarantined: not imported, reported with both digests.
   */
  readonly pin?: string;
  /** Scopes a principal must all hold to see and call the tool (`[]`: any principal of the tenant). */
  readonly scopes: readonly string[];
  /**
   * Default true: the tool is assumed to change state, whatever its `readOnlyHint` says. Set false
   * only for a tool you know to be read-only: it may then be retried and is never UNRESOLVED.
   */
  readonly stateChanging?: boolean;
  /** Cannot be undone (delete, pay, send). Default false; requires `stateChanging`. */
  readonly destructive?: boolean;
  /** Per-attempt timeout in ms. Default 10 000 (toolgate's default). */
  readonly timeoutMs?: number;
  /** Argument fields the audit record may keep verbatim. Default `[]`: all redacted. */
  readonly auditFields?: readonly string[];
  readonly retry?: McpUpstreamRetry;
  /** Per-principal/tool/tenant call budget (toolgate's rate-limit stage). Default none. */
  readonly rateLimit?: RateLimitSpec;
  /** The toolgate name, instead of `toolPrefix` + the upstream name. */
  readonly name?: string;
  /**
   * The description shown to models, instead of the upstream's (which the pin covers). Needed when
   * the upstream gives none.
   */
  readonly description?: string;
  /** The toolgate tool version (`MAJOR.MINOR.PATCH`). Default `1.0.0`. */
  readonly version?: string;
}

/** One upstream MCP server whose tools toolgate runs through its guard pipeline. */
export interface McpUpstreamOptions {
  /**
   * The upstream's name: every imported tool's `downstream`, so the upstream has ONE circuit
   * breaker and one outbound budget, shared by all its tools. Non-empty.
   */
  readonly name: string;
  readonly transport: McpUpstreamTransport;
  /** Prepended to each upstream tool name to make its toolgate name, e.g. `everything_`. Default `''`. */
  readonly toolPrefix?: string;
  /** The tools to import, keyed by their name on the upstream. Tools not named here are ignored. */
  readonly tools: Readonly<Record<string, McpUpstreamToolSettings>>;
  /** The imported tools' `owner`. Default `mcp-upstream:<name>`. */
  readonly owner?: string;
  /**
   * MCP protocol negotiation. `auto` (default): probe for 2026-07-28 and fall back to 2025-11-25
   * (on stdio the probe runs in a short-lived second process); `legacy`: 2025-11-25 only.
   */
  readonly versionNegotiation?: 'auto' | 'legacy';
  /** How long connecting and each `tools/list` may take, in ms. Default 30 000. */
  readonly requestTimeoutMs?: number;
  /**
   * Re-list the upstream's tools this often (ms) to catch schema changes on upstreams that do not
   * send `notifications/tools/list_changed`. Default: no polling.
   */
  readonly refreshIntervalMs?: number;
  /** Hears of background refreshes (notification or polling) that failed. Default: ignored. */
  readonly onRefreshError?: (error: unknown) => void;
  /** The upstream's outbound budget, used by {@link mcpUpstreamCatalog} as its downstream limit. */
  readonly outboundLimit?: BucketLimit;
  /** How toolgate introduces itself to the upstream. Default `{ name: 'toolgate', version: '0.1.0' }`. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
}

/** Why an upstream tool is not run. */
export type QuarantineReason =
  /** Named in the settings without a `pin`. */
  | 'unpinned'
  /** Its current digest differs from the pin: its name, description or schemas changed. */
  | 'digest-mismatch'
  /** Named in the settings (or imported earlier) but not listed by the upstream. */
  | 'missing'
  /** Its input or output JSON Schema cannot be converted to a zod schema. */
  | 'schema-unsupported'
  /** The resulting tool definition is invalid (e.g. an invalid name, no description). */
  | 'invalid-definition';

/**
 * An upstream tool toolgate does not run, with what the operator needs to decide. To accept a tool
 * whose schema changed (or was never pinned), review the upstream's new definition and set the
 * tool's `pin` to `actualDigest`.
 */
export interface QuarantinedTool {
  /** The tool's name on the upstream. */
  readonly upstreamName: string;
  /** The toolgate name it has (or would have). */
  readonly name: string;
  readonly reason: QuarantineReason;
  /** One sentence for the operator's log. Not for models. */
  readonly detail: string;
  /** The pin in the settings, when there is one. */
  readonly expectedDigest?: string;
  /** The digest of what the upstream lists now, when it lists the tool. */
  readonly actualDigest?: string;
}

/** One tool as the upstream lists it, with its digest: what an operator pins. */
export interface ListedMcpTool {
  readonly upstreamName: string;
  readonly digest: string;
}

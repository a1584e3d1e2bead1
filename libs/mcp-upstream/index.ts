/**
 * Existing MCP servers as toolgate downstreams: their tools, imported under pinned schema digests,
 * run through the guard pipeline. See README.md in this folder. Imported as `toolgate/mcp-upstream`.
 */
export {
  connectMcpUpstream,
  DEFAULT_UPSTREAM_REQUEST_TIMEOUT_MS,
  type McpUpstream,
  type McpUpstreamRefresh,
} from './connect.js';
export {
  mcpUpstreamCatalog,
  pinnedSchemaPolicy,
  type McpUpstreamCatalog,
  type McpUpstreamCatalogOptions,
} from './catalog.js';
export { mcpToolDigest, type DigestableMcpTool } from './digest.js';
export { DEFAULT_SAFE_ATTEMPTS, IDEMPOTENCY_KEY_META, TEXT_OUTPUT } from './import-tool.js';
export type {
  ListedMcpTool,
  McpUpstreamOptions,
  McpUpstreamRetry,
  McpUpstreamToolSettings,
  McpUpstreamTransport,
  QuarantinedTool,
  QuarantineReason,
} from './options.js';
export { changedToolError, PIN_RULE_ID, toolReportedError, upstreamCallFailure } from './upstream-errors.js';
/** The upstream's own credential (`transport.bearerToken`): never logged or serialized. */
export { Secret } from '../integrations/secret.js';

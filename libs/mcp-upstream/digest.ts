import { canonicalJson, sha256Hex } from '../core/canonical-json.js';

/** The parts of an MCP tool listing a schema digest covers (an MCP `Tool` from `tools/list` fits). */
export interface DigestableMcpTool {
  readonly name: string;
  readonly description?: string | undefined;
  readonly inputSchema: unknown;
  readonly outputSchema?: unknown;
}

/**
 * The schema digest of an upstream MCP tool: lowercase hex SHA-256 (64 characters) of the RFC 8785
 * canonical JSON of `{ name, description, inputSchema, outputSchema }` as the upstream lists them
 * (the upstream's own name, not the prefixed toolgate name). An absent description or output
 * schema is left out, so "absent" and "undefined" give the same digest.
 *
 * Covered: everything the model is shown or sends (name, description, the input schema) and the
 * shape the answer is validated against (output schema). Not covered: `title`, `annotations`,
 * `icons`, `_meta` — none of them decides what toolgate does (annotations are untrusted hints).
 *
 * Deterministic across key order, whitespace and processes; this is the value an operator puts in
 * a tool's `pin`. Throws a ToolgateError SCHEMA_INVALID only for values that are not JSON data,
 * which a parsed `tools/list` answer never holds.
 */
export function mcpToolDigest(tool: DigestableMcpTool): string {
  return sha256Hex(
    canonicalJson({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema,
    }),
  );
}

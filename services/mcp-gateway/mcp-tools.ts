import { z } from 'zod';
import { inputJsonSchema, type JsonSchema } from '../../libs/registry/input-json-schema.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';

/** JSON Schema dialect of every schema the gateway publishes (required by 2026-07-28, default of 2025-11-25). */
export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** One tool as `tools/list` describes it (the MCP `Tool` shape the gateway fills). */
export interface McpTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly annotations: {
    readonly title: string;
    readonly readOnlyHint: boolean;
    readonly destructiveHint: boolean;
    readonly idempotentHint: boolean;
    readonly openWorldHint: boolean;
  };
  readonly _meta: { readonly 'io.toolgate/version': string };
}

const outputCache = new WeakMap<object, JsonSchema | null>();

/**
 * The output schema of a tool when it is an object schema (MCP's `outputSchema` must be
 * `type: object`), else undefined: such a tool's results carry text content only. Cached per schema.
 */
export function outputJsonSchema(tool: Pick<ToolDefinition, 'output'>): JsonSchema | undefined {
  const hit = outputCache.get(tool.output);
  if (hit !== undefined) return hit ?? undefined;
  let schema: JsonSchema | null = null;
  try {
    const generated = z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any' });
    if (generated.type === 'object') {
      delete generated.$schema;
      schema = { $schema: JSON_SCHEMA_DIALECT, ...generated };
    }
  } catch {
    schema = null;
  }
  outputCache.set(tool.output, schema);
  return schema ?? undefined;
}

/**
 * A registry tool as MCP lists it. The annotations come from toolgate's own metadata, which the
 * guard pipeline enforces, so they are facts about this server rather than the tool author's hints:
 * - `readOnlyHint` = not `stateChanging`; `destructiveHint` = `destructive` (false when read-only);
 * - `idempotentHint` = read-only, or the downstream deduplicates on the forwarded key;
 * - `openWorldHint` = the tool calls a named downstream (an external system).
 * The input schema is the one the executors validate against (JSON Schema 2020-12).
 */
export function toMcpTool(tool: ToolDefinition): McpTool {
  const outputSchema = outputJsonSchema(tool);
  const title = tool.name
    .split(/[_-]/)
    .filter((w) => w !== '')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join(' ');
  return {
    name: tool.name,
    title,
    description: tool.description,
    inputSchema: { $schema: JSON_SCHEMA_DIALECT, ...inputJsonSchema(tool) },
    ...(outputSchema === undefined ? {} : { outputSchema }),
    annotations: {
      title,
      readOnlyHint: !tool.stateChanging,
      destructiveHint: tool.stateChanging && tool.destructive,
      idempotentHint: !tool.stateChanging || tool.retrySafety.kind === 'forwards-key',
      openWorldHint: tool.downstream !== undefined,
    },
    _meta: { 'io.toolgate/version': tool.version },
  };
}

import { systemClock } from '../../libs/core/system-clock.js';
import { inputJsonSchema, type JsonSchema } from '../../libs/registry/input-json-schema.js';
import { storeTools } from '../catalog/store-catalog.js';
import { createMemoryDownstreams } from '../downstreams/memory-downstreams.js';

/** The schema variants the eval compares, from weakest to strongest. */
export const SCHEMA_VARIANTS = ['bare', 'one-line', 'described'] as const;
export type SchemaVariant = (typeof SCHEMA_VARIANTS)[number];

/** A tool as a model is shown it, provider-neutral. */
export interface ToolSpec {
  readonly name: string;
  /** Absent in the bare variant. */
  readonly description?: string;
  readonly parameters: JsonSchema;
}

/** The store tools the labelled requests are about. */
export const EVAL_TOOLS = [
  'lookup_order',
  'search_customers',
  'crm_lookup_contact',
  'issue_refund',
  'update_inventory',
  'get_weather',
] as const;

/**
 * The store's tools as each variant shows them:
 * - `described`: the catalog's own export (description naming the confusable neighbour, every
 *   parameter described with its constraint, enums, patterns);
 * - `one-line`: the first sentence of the description, JSON types and enums, nothing per parameter;
 * - `bare`: names and JSON types only (no descriptions, enums, patterns or bounds).
 * Derived from the live definitions, so a schema edit in the catalog shows up in `described`.
 */
export function toolSpecs(variant: SchemaVariant): ToolSpec[] {
  const downstreams = createMemoryDownstreams({ clock: systemClock });
  const tools = storeTools(downstreams, systemClock).filter((t) =>
    (EVAL_TOOLS as readonly string[]).includes(t.name),
  );
  void downstreams.close();
  return tools.map((tool) => {
    const full = inputJsonSchema(tool);
    if (variant === 'described') return { name: tool.name, description: tool.description, parameters: full };
    if (variant === 'one-line') {
      return { name: tool.name, description: firstSentence(tool.description), parameters: strip(full, true) };
    }
    return { name: tool.name, parameters: strip(full, false) };
  });
}

function firstSentence(text: string): string {
  const end = text.search(/\.(\s|$)/);
  return end === -1 ? text : text.slice(0, end + 1);
}

/** Keeps structure and types (and enums when asked); drops every word and constraint. */
function strip(schema: JsonSchema, keepEnums: boolean): JsonSchema {
  const out: Record<string, unknown> = {};
  for (const key of ['type', 'required', 'additionalProperties'] as const) {
    if (key in schema) out[key] = schema[key];
  }
  if (keepEnums && 'enum' in schema) out.enum = schema.enum;
  if (isSchema(schema.items)) out.items = strip(schema.items, keepEnums);
  if (isSchema(schema.properties)) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([k, v]) => [k, isSchema(v) ? strip(v, keepEnums) : v]),
    );
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list))
      out[key] = (list as unknown[]).map((v) => (isSchema(v) ? strip(v, keepEnums) : v));
  }
  return out;
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

import { z } from 'zod';
import { deepFreeze } from '../core/deep-freeze.js';
import { ToolDefinitionError } from './definition-error.js';
import type { ToolDefinition } from './tool-definition.js';
import { inputObjectOf } from './zod-introspect.js';

/** A JSON Schema node as plain data. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** The parts of a definition a provider export reads. Any `ToolDefinition<I, O>` fits. */
export type ExportableTool = Pick<ToolDefinition, 'name' | 'description' | 'input'>;

const cache = new WeakMap<object, JsonSchema>();

/**
 * Removes what zod adds that tells a model nothing and only spends tokens: the ±(2^53−1) bounds of
 * `z.int()`, and the `pattern` zod emits beside a `format` (the regex it uses to check that format,
 * e.g. a 300-character date-time expression; the format name says the same). Bounds and patterns
 * the author wrote on plain strings and numbers stay. Validation is unaffected: zod still checks.
 */
function tidy(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(tidy);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  if (record.maximum === Number.MAX_SAFE_INTEGER) delete record.maximum;
  if (record.minimum === Number.MIN_SAFE_INTEGER) delete record.minimum;
  if (typeof record.format === 'string' && 'pattern' in record) delete record.pattern;
  Object.values(record).forEach(tidy);
}

/**
 * The JSON Schema (draft 2020-12, as zod 4 emits it with `io: 'input'`) of a tool's arguments, as
 * the model should see it: what the model must send, so defaults make fields optional and
 * transforms are described by their input side. `$schema` is omitted (providers do not want it),
 * and zod's token-only additions are removed (see tidy).
 *
 * Contract: the result is deeply frozen and cached per input schema; callers build new objects
 * rather than edit it. Throws {@link ToolDefinitionError} when the input is not an object schema or
 * contains a type JSON Schema cannot express (definitions made by defineTool were checked already).
 */
export function inputJsonSchema(tool: ExportableTool): JsonSchema {
  const object = inputObjectOf(tool.input);
  if (object === undefined) {
    throw new ToolDefinitionError(tool.name, ['input must be a z.object(...) schema.']);
  }
  const hit = cache.get(object);
  if (hit !== undefined) return hit;
  let generated: Record<string, unknown>;
  try {
    generated = z.toJSONSchema(object, { io: 'input' });
  } catch (err) {
    throw new ToolDefinitionError(tool.name, [
      `input cannot be expressed as JSON Schema (${(err as Error).message}).`,
    ]);
  }
  delete generated.$schema;
  tidy(generated);
  const frozen = deepFreeze(generated);
  cache.set(object, frozen);
  return frozen;
}

import type { z } from 'zod';
import { acceptsNull, childrenOf, coreOf, isOptionalKey, isZodSchema, shapeOf } from './zod-introspect.js';
import type { ZodNode } from './zod-introspect.js';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function normalize(node: ZodNode, value: unknown, depth: number): unknown {
  if (depth > 64) return value;
  const core = coreOf(node);
  const { kind, element, options, items } = childrenOf(core);
  if (kind === 'object' && isPlainObject(value)) {
    const shape = shapeOf(core);
    let out: Record<string, unknown> | undefined;
    for (const [key, field] of Object.entries(shape)) {
      if (!Object.hasOwn(value, key)) continue;
      const before = value[key];
      let after: unknown;
      let drop = false;
      if (before === null && isOptionalKey(field) && !acceptsNull(field)) drop = true;
      else after = normalize(field, before, depth + 1);
      if (drop || after !== before) {
        out ??= { ...value };
        if (drop) delete out[key];
        else out[key] = after;
      }
    }
    return out ?? value;
  }
  if (kind === 'array' && element !== undefined && Array.isArray(value)) {
    const list: readonly unknown[] = value;
    let changed = false;
    const mapped = list.map((v) => {
      const n = normalize(element, v, depth + 1);
      if (n !== v) changed = true;
      return n;
    });
    return changed ? mapped : value;
  }
  if (kind === 'tuple' && items !== undefined && Array.isArray(value)) {
    const list: readonly unknown[] = value;
    let changed = false;
    const mapped = list.map((v, i) => {
      const item = items[i];
      const n = item === undefined ? v : normalize(item, v, depth + 1);
      if (n !== v) changed = true;
      return n;
    });
    return changed ? mapped : value;
  }
  if (kind === 'union' && options !== undefined) {
    // Which branch the value is meant for is only known by trying: keep the first normalization a
    // branch accepts, otherwise leave the value alone so the real validation reports the real error.
    for (const option of options) {
      const candidate = normalize(option, value, depth + 1);
      if (candidate !== value && (option as unknown as z.ZodType).safeParse(candidate).success)
        return candidate;
    }
  }
  return value;
}

/**
 * Treats `null` as "absent" for optional fields that do not themselves accept `null`, at every depth
 * (nested objects, array elements, tuple items, union branches), and returns the arguments ready for
 * `schema.parse`.
 *
 * Why: in OpenAI strict mode every property must be listed in `required`, so the export turns an
 * optional field into a nullable one and the model sends `null` where it means "not given". Without
 * this step a correct strict-mode call would fail validation. A field declared `.nullable()` keeps its
 * `null`; required fields are never touched, so `null` for them is still a schema error.
 *
 * Contract: pure, never throws, never mutates `args` (changed containers are copied; unchanged ones
 * are returned as the same reference). Non-zod schemas and non-object arguments pass through.
 * {@link defineTool} already applies it inside every tool's `input` schema, so callers of
 * `tool.input.safeParse(...)` need not call it themselves; it is exported for hand-built definitions
 * and for tests.
 */
export function normalizeStrictNulls(schema: z.ZodType, args: unknown): unknown {
  return isZodSchema(schema) ? normalize(schema, args, 0) : args;
}

import type { z } from 'zod';

/**
 * Read-only views of zod 4's schema internals (`schema._zod.def`), limited to the few fields the
 * registry needs. zod's public types do not expose `def` per kind, so this is the one place that
 * knows their shape.
 */
export interface ZodNode {
  readonly _zod: { readonly def: ZodDef; readonly optin?: 'optional' | 'defaulted' };
}

interface ZodDef {
  readonly type: string;
  readonly innerType?: ZodNode;
  readonly in?: ZodNode;
  readonly out?: ZodNode;
  readonly shape?: Readonly<Record<string, ZodNode>>;
  readonly element?: ZodNode;
  readonly options?: readonly ZodNode[];
  readonly items?: readonly ZodNode[];
  readonly values?: readonly unknown[];
  readonly getter?: () => ZodNode;
}

/** True for any zod 4 schema. */
export function isZodSchema(value: unknown): value is ZodNode {
  if (typeof value !== 'object' || value === null || !('_zod' in value)) return false;
  const internals: unknown = value._zod;
  return typeof internals === 'object' && internals !== null && 'def' in internals;
}

function kind(node: ZodNode): string {
  return node._zod.def.type;
}

/** The wrappers that keep the value's shape: peel them to reach the schema that describes it. */
function unwrapOnce(node: ZodNode): ZodNode | undefined {
  const def = node._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return def.innerType;
    case 'pipe':
      return def.in !== undefined && kind(def.in) === 'transform' ? def.out : def.in;
    case 'lazy':
      return def.getter?.();
    default:
      return undefined;
  }
}

/** The schema that describes the value's structure, with optional/nullable/default/pipe peeled off. */
export function coreOf(node: ZodNode): ZodNode {
  let current = node;
  // Bounded so a pathological self-referencing lazy cannot hang registration.
  for (let i = 0; i < 64; i++) {
    const next = unwrapOnce(current);
    if (next === undefined) return current;
    current = next;
  }
  return current;
}

/**
 * The object schema behind a tool's `input`: the schema itself when it is a `z.object`, or the object
 * at the end of `z.preprocess(...)` layers (which is how {@link defineTool} wraps it). Undefined when
 * the input is not an object schema.
 */
export function inputObjectOf(schema: unknown): z.ZodObject | undefined {
  if (!isZodSchema(schema)) return undefined;
  let node: ZodNode = schema;
  for (let i = 0; i < 16; i++) {
    const def = node._zod.def;
    if (def.type === 'object') return node as unknown as z.ZodObject;
    if (
      def.type === 'pipe' &&
      def.in !== undefined &&
      kind(def.in) === 'transform' &&
      def.out !== undefined
    ) {
      node = def.out;
      continue;
    }
    return undefined;
  }
  return undefined;
}

/** The fields of an object schema, by key. */
export function shapeOf(node: ZodNode): Readonly<Record<string, ZodNode>> {
  return node._zod.def.shape ?? {};
}

/** True when an object key with this schema may be absent from the input. */
export function isOptionalKey(node: ZodNode): boolean {
  return node._zod.optin !== undefined;
}

/** True when this schema accepts `null` as input, judged from its structure (nothing is run). */
export function acceptsNull(node: ZodNode): boolean {
  let current: ZodNode | undefined = node;
  for (let i = 0; i < 64 && current !== undefined; i++) {
    const def: ZodDef = current._zod.def;
    switch (def.type) {
      case 'nullable':
      case 'null':
      case 'any':
      case 'unknown':
        return true;
      case 'union':
        return (def.options ?? []).some(acceptsNull);
      case 'literal':
        return (def.values ?? []).includes(null);
      default:
        current = unwrapOnce(current);
    }
  }
  return false;
}

/** Kind-specific children used by the null normalizer. */
export function childrenOf(node: ZodNode): {
  readonly kind: string;
  readonly element?: ZodNode;
  readonly options?: readonly ZodNode[];
  readonly items?: readonly ZodNode[];
} {
  const def = node._zod.def;
  return { kind: def.type, element: def.element, options: def.options, items: def.items };
}

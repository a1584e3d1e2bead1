import { ToolDefinitionError } from './definition-error.js';
import type { JsonSchema } from './input-json-schema.js';
import { OPENAI_STRICT_FORMATS, OPENAI_STRICT_VERBATIM_KEYWORDS } from './openai-strict-subset.js';

type Node = Record<string, unknown>;

const PRIMITIVE_TYPES = new Set(['string', 'number', 'integer', 'boolean']);

/** Keywords copied verbatim: all inside the strict subset. */
const COPIED = new Set(OPENAI_STRICT_VERBATIM_KEYWORDS);

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNullable(node: Node): boolean {
  const type = node.type;
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true;
  return Array.isArray(node.anyOf) && node.anyOf.some((branch) => isNode(branch) && isNullable(branch));
}

/** An optional field becomes a required, nullable one: the only way strict mode expresses "may be absent". */
function makeNullable(node: Node): Node {
  if (isNullable(node)) return node;
  const hasValueList = 'enum' in node || 'const' in node;
  if (typeof node.type === 'string' && PRIMITIVE_TYPES.has(node.type) && !hasValueList) {
    return { ...node, type: [node.type, 'null'] };
  }
  if (Array.isArray(node.anyOf) && Object.keys(node).every((k) => k === 'anyOf' || k === 'description')) {
    return { ...node, anyOf: [...(node.anyOf as unknown[]), { type: 'null' }] };
  }
  const { description, ...rest } = node;
  return description === undefined
    ? { anyOf: [rest, { type: 'null' }] }
    : { anyOf: [rest, { type: 'null' }], description };
}

function lengthNote(min: unknown, max: unknown): string | undefined {
  if (typeof min === 'number' && typeof max === 'number') {
    return min === max ? `Exactly ${min} characters.` : `Length ${min}-${max} characters.`;
  }
  if (typeof min === 'number') return `At least ${min} characters.`;
  if (typeof max === 'number') return `At most ${max} characters.`;
  return undefined;
}

class StrictTransformer {
  readonly problems: string[] = [];

  node(value: unknown, path: string): Node {
    if (!isNode(value)) {
      this.problems.push(`${path}: a boolean or non-object schema cannot be used in strict mode.`);
      return {};
    }
    if (!['type', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', '$ref'].some((k) => k in value)) {
      this.problems.push(
        `${path}: an unconstrained value (z.any()/z.unknown()) cannot be expressed in strict mode.`,
      );
    }
    const out: Node = {};
    const notes: string[] = [];
    for (const [key, v] of Object.entries(value)) {
      if (COPIED.has(key)) out[key] = v;
    }
    if (typeof value.format === 'string') {
      if (OPENAI_STRICT_FORMATS.has(value.format)) out.format = value.format;
      else notes.push(`Format: ${value.format}.`);
    }
    const length = lengthNote(value.minLength, value.maxLength);
    if (length !== undefined) notes.push(length);
    if (value.uniqueItems === true) notes.push('Items must be unique.');
    if ('default' in value && value.default !== null && value.default !== undefined) {
      notes.push(`Defaults to ${JSON.stringify(value.default)} when null.`);
    }
    this.composition(value, out, path);
    this.array(value, out, path);
    this.object(value, out, path);
    for (const defsKey of ['$defs', 'definitions'] as const) {
      const defs = value[defsKey];
      if (isNode(defs)) {
        out[defsKey] = Object.fromEntries(
          Object.entries(defs).map(([name, d]) => [name, this.node(d, `${path}/${defsKey}/${name}`)]),
        );
      }
    }
    if (notes.length > 0) {
      out.description = [typeof value.description === 'string' ? value.description : '', ...notes]
        .filter((s) => s.length > 0)
        .join(' ');
    }
    return out;
  }

  private composition(value: Node, out: Node, path: string): void {
    const branches = [
      ...(Array.isArray(value.anyOf) ? (value.anyOf as unknown[]) : []),
      // oneOf only adds "exactly one" on top of anyOf; the zod validation still enforces it.
      ...(Array.isArray(value.oneOf) ? (value.oneOf as unknown[]) : []),
    ];
    if (branches.length > 0) out.anyOf = branches.map((b, i) => this.node(b, `${path}/anyOf/${i}`));
    if (Array.isArray(value.allOf)) {
      if (value.allOf.length === 1) Object.assign(out, this.node(value.allOf[0], `${path}/allOf/0`));
      else
        this.problems.push(
          `${path}: allOf (an intersection) is not supported in strict mode; merge the objects.`,
        );
    }
  }

  private array(value: Node, out: Node, path: string): void {
    if ('prefixItems' in value || Array.isArray(value.items)) {
      this.problems.push(
        `${path}: tuples are not supported in strict mode; use an object with named fields.`,
      );
      return;
    }
    if ('items' in value) out.items = this.node(value.items, `${path}/items`);
  }

  private object(value: Node, out: Node, path: string): void {
    const isObject = value.type === 'object' || 'properties' in value;
    if (!isObject) return;
    const properties = isNode(value.properties) ? value.properties : {};
    const open = value.additionalProperties !== undefined && value.additionalProperties !== false;
    if (open && Object.keys(properties).length === 0) {
      this.problems.push(
        `${path}: an open-ended object (z.record / map) cannot be expressed in strict mode; ` +
          'use an array of { key, value } objects.',
      );
    }
    const required = new Set(Array.isArray(value.required) ? (value.required as unknown[]) : []);
    const strictProps: Node = {};
    for (const [key, child] of Object.entries(properties)) {
      const converted = this.node(child, `${path}/properties/${key}`);
      strictProps[key] = required.has(key) ? converted : makeNullable(converted);
    }
    out.type = 'object';
    out.properties = strictProps;
    out.required = Object.keys(strictProps);
    // Extra keys of a loose object or catchall are optional by nature; closing the object only
    // stops the model from sending them.
    out.additionalProperties = false;
  }
}

/**
 * Rewrites a tool's input JSON Schema into OpenAI's strict subset (see OPENAI_STRICT_KEYWORDS):
 * every object closed with `additionalProperties: false` and every property listed in `required`;
 * optional properties become nullable (`type: [T, "null"]` for primitives, otherwise
 * `anyOf: [T, {type: "null"}]`), which is why tool input parsing treats `null` as absent
 * (normalizeStrictNulls); `oneOf` becomes `anyOf`; a single-branch `allOf` is inlined.
 *
 * Constraints outside the subset are dropped from the schema but kept for the model as text in the
 * field's description (`minLength`/`maxLength`, `uniqueItems`, `default`, an unsupported `format`),
 * because a model that cannot be constrained can still be told; the zod validation still enforces
 * them. Annotation-only keywords (`title`, `examples`, `$comment`, …) are dropped.
 *
 * Throws {@link ToolDefinitionError} listing every part that strict mode cannot express at all:
 * records/maps, tuples, multi-branch `allOf`, unconstrained values, a root that is not an object.
 * The input is not modified.
 */
export function toStrictJsonSchema(schema: JsonSchema, toolName: string): JsonSchema {
  const transformer = new StrictTransformer();
  if (schema.type !== 'object') transformer.problems.push('#: the root schema must be an object.');
  const out = transformer.node(schema, '#');
  if (transformer.problems.length > 0) throw new ToolDefinitionError(toolName, transformer.problems);
  return out;
}

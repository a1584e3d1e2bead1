import type { AnthropicToolDefinition, OpenAIToolDefinition } from '../providers/provider-shapes.js';
import {
  OPENAI_STRICT_FORMATS,
  OPENAI_STRICT_KEYWORDS,
  OPENAI_STRICT_LIMITS,
} from './openai-strict-subset.js';
import type { OpenAIStrictLimits } from './openai-strict-subset.js';
import { isValidToolName } from './tool-name.js';

type Node = Record<string, unknown>;

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function resolvesIn(root: Node, ref: string): boolean {
  if (ref === '#') return true;
  if (!ref.startsWith('#/')) return false;
  let at: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isNode(at) || !(key in at)) return false;
    at = at[key];
  }
  return isNode(at);
}

class StrictSchemaChecker {
  readonly violations: string[] = [];
  private properties = 0;
  private enumValues = 0;
  private stringLength = 0;

  constructor(
    private readonly root: Node,
    private readonly limits: OpenAIStrictLimits,
  ) {}

  run(): string[] {
    this.check(this.root, '#', 0);
    const { maxProperties, maxEnumValues, maxTotalStringLength } = this.limits;
    if (this.properties > maxProperties) {
      this.violations.push(
        `#: ${this.properties} object properties in total exceed the limit of ${maxProperties}.`,
      );
    }
    if (this.enumValues > maxEnumValues) {
      this.violations.push(
        `#: ${this.enumValues} enum values in total exceed the limit of ${maxEnumValues}.`,
      );
    }
    if (this.stringLength > maxTotalStringLength) {
      this.violations.push(
        `#: names and enum values total ${this.stringLength} characters (limit ${maxTotalStringLength}).`,
      );
    }
    return this.violations;
  }

  private check(node: unknown, path: string, depth: number): void {
    if (!isNode(node)) {
      this.violations.push(`${path}: a schema must be a JSON object.`);
      return;
    }
    for (const key of Object.keys(node)) {
      if (!OPENAI_STRICT_KEYWORDS.has(key)) this.violations.push(`${path}: unsupported keyword '${key}'.`);
    }
    const types = Array.isArray(node.type)
      ? (node.type as unknown[])
      : node.type === undefined
        ? []
        : [node.type];
    for (const t of types) {
      if (typeof t !== 'string' || !JSON_TYPES.has(t))
        this.violations.push(`${path}: unknown type ${JSON.stringify(t)}.`);
    }
    if (types.length === 0 && !['anyOf', 'enum', 'const', '$ref'].some((k) => k in node)) {
      this.violations.push(`${path}: has no type (an unconstrained value is not allowed).`);
    }
    if (
      node.format !== undefined &&
      !(typeof node.format === 'string' && OPENAI_STRICT_FORMATS.has(node.format))
    ) {
      this.violations.push(`${path}: format ${JSON.stringify(node.format)} is not supported.`);
    }
    this.values(node, path);
    if (typeof node.$ref === 'string' && !resolvesIn(this.root, node.$ref)) {
      this.violations.push(`${path}: $ref '${node.$ref}' does not resolve inside the schema.`);
    }
    const isObject = types.includes('object') || 'properties' in node;
    const level = isObject ? depth + 1 : depth;
    if (isObject) this.object(node, path, level);
    if ('items' in node) {
      if (Array.isArray(node.items)) this.violations.push(`${path}: tuple items are not supported.`);
      else this.check(node.items, `${path}/items`, level);
    }
    if ('anyOf' in node) {
      if (!Array.isArray(node.anyOf)) this.violations.push(`${path}: anyOf must be an array.`);
      else node.anyOf.forEach((branch, i) => this.check(branch, `${path}/anyOf/${i}`, depth));
    }
    for (const defsKey of ['$defs', 'definitions']) {
      const defs = node[defsKey];
      if (!isNode(defs)) continue;
      for (const [name, def] of Object.entries(defs)) {
        this.stringLength += name.length;
        // A definition's depth depends on where it is referenced; it is measured from its own root.
        this.check(def, `${path}/${defsKey}/${name}`, 0);
      }
    }
  }

  private values(node: Node, path: string): void {
    if ('enum' in node) {
      if (!Array.isArray(node.enum) || node.enum.length === 0) {
        this.violations.push(`${path}: enum must be a non-empty array.`);
      } else {
        this.enumValues += node.enum.length;
        for (const v of node.enum) if (typeof v === 'string') this.stringLength += v.length;
      }
    }
    if (typeof node.const === 'string') this.stringLength += node.const.length;
  }

  private object(node: Node, path: string, level: number): void {
    if (level > this.limits.maxNestingDepth) {
      this.violations.push(
        `${path}: object nesting level ${level} exceeds the limit of ${this.limits.maxNestingDepth}.`,
      );
    }
    if (node.additionalProperties !== false) {
      this.violations.push(`${path}: additionalProperties must be false.`);
    }
    const properties = isNode(node.properties) ? node.properties : {};
    const required = Array.isArray(node.required) ? (node.required as unknown[]) : [];
    for (const key of Object.keys(properties)) {
      this.properties += 1;
      this.stringLength += key.length;
      if (!required.includes(key))
        this.violations.push(`${path}: property '${key}' is not listed in required.`);
    }
    for (const key of required) {
      if (typeof key !== 'string' || !Object.hasOwn(properties, key)) {
        this.violations.push(`${path}: required names ${JSON.stringify(key)}, which is not a property.`);
      }
    }
    for (const [key, child] of Object.entries(properties))
      this.check(child, `${path}/properties/${key}`, level);
  }
}

/**
 * Every reason OpenAI would refuse this tool as a `strict: true` function tool; empty when none.
 *
 * Checks: `type: 'function'`; the name rule ^[a-zA-Z0-9_-]{1,64}$; `strict === true`; a root schema
 * of `type: 'object'` that is not `anyOf`; in every object `additionalProperties: false`, every
 * property listed in `required` and nothing else listed; only keywords and formats of the strict
 * subset (OPENAI_STRICT_KEYWORDS / OPENAI_STRICT_FORMATS); every node typed or composed; tuples
 * refused; `$ref` resolving inside the schema; nesting depth, total property, enum-value and string
 * budgets within `limits` (default OPENAI_STRICT_LIMITS: 5 levels, 100 properties). Pure; accepts any
 * value shaped like a tool and never throws.
 */
export function checkOpenAIStrictTool(
  tool: OpenAIToolDefinition,
  limits: OpenAIStrictLimits = OPENAI_STRICT_LIMITS,
): string[] {
  const violations: string[] = [];
  const candidate = tool as unknown as Node;
  if (candidate.type !== 'function' || !isNode(candidate.function)) {
    return ["tool must be { type: 'function', function: { ... } }."];
  }
  const fn = candidate.function;
  if (!isValidToolName(fn.name))
    violations.push(`name ${JSON.stringify(fn.name)} must match ^[a-zA-Z0-9_-]{1,64}$.`);
  if (fn.strict !== true) violations.push('strict must be true.');
  const parameters = fn.parameters;
  if (!isNode(parameters)) return [...violations, 'parameters must be a JSON Schema object.'];
  if (parameters.type !== 'object') violations.push("#: the root schema must have type 'object'.");
  if ('anyOf' in parameters) violations.push('#: the root schema must not be anyOf.');
  return [...violations, ...new StrictSchemaChecker(parameters, limits).run()];
}

/**
 * Every reason Anthropic would refuse this custom tool; empty when none. Checks the name rule
 * ^[a-zA-Z0-9_-]{1,64}$, an `input_schema` object whose `type` is `'object'`, and a non-empty
 * description (optional in the API, but without one the model is choosing blind). Pure; never throws.
 */
export function checkAnthropicTool(tool: AnthropicToolDefinition): string[] {
  const violations: string[] = [];
  const candidate = tool as unknown as Node;
  if (!isValidToolName(candidate.name)) {
    violations.push(`name ${JSON.stringify(candidate.name)} must match ^[a-zA-Z0-9_-]{1,64}$.`);
  }
  if (!isNode(candidate.input_schema)) violations.push('input_schema must be a JSON Schema object.');
  else if (candidate.input_schema.type !== 'object') violations.push("input_schema.type must be 'object'.");
  if (typeof candidate.description !== 'string' || candidate.description.trim().length === 0) {
    violations.push('description must be present and non-empty.');
  }
  return violations;
}

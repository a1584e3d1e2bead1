import type { CedarValueJson, TypeOfAttribute } from '@cedar-policy/cedar-wasm/nodejs';
import type { JsonSchema } from '../registry/input-json-schema.js';

/**
 * The Cedar types a tool's arguments are described with. JSON numbers become `decimal` (Cedar has
 * no floating point; a decimal holds four places, which money and quantities fit), JSON integers
 * `Long`, arrays `Set`s, objects closed `Record`s.
 */
export type CedarType =
  | { readonly type: 'String' }
  | { readonly type: 'Long' }
  | { readonly type: 'Boolean' }
  | { readonly type: 'Extension'; readonly name: 'decimal' }
  | { readonly type: 'Set'; readonly element: CedarType }
  | { readonly type: 'Record'; readonly attributes: Readonly<Record<string, CedarAttribute>> };

/** A record attribute: its type, and whether every value has it. */
export type CedarAttribute = CedarType & { readonly required: boolean };

/** The places a Cedar `decimal` holds. */
export const DECIMAL_PLACES = 4;
const SCALE = 10 ** DECIMAL_PLACES;

const DECIMAL: CedarType = { type: 'Extension', name: 'decimal' };

/**
 * The Cedar type of a JSON Schema node (as `inputJsonSchema` emits it), or `undefined` when Cedar
 * cannot type it: unions of different types, tuples, maps with open keys, `any`. An untypeable
 * attribute is left out of its record, so a policy that reads it fails validation ("not found")
 * instead of reading something the schema cannot vouch for. `null` in a union makes the attribute
 * optional (a null value is passed as absent).
 */
export function cedarTypeOf(schema: unknown): CedarType | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const node = schema as JsonSchema;
  if (Array.isArray(node.anyOf)) return unionType(node.anyOf);
  if (Array.isArray(node.type)) return unionType((node.type as unknown[]).map((type) => ({ ...node, type })));
  if (Array.isArray(node.enum) && node.type === undefined) {
    return node.enum.every((v) => typeof v === 'string') ? { type: 'String' } : undefined;
  }
  if (node.const !== undefined && node.type === undefined) {
    return typeof node.const === 'string' ? { type: 'String' } : undefined;
  }
  switch (node.type) {
    case 'string':
      return { type: 'String' };
    case 'integer':
      return { type: 'Long' };
    case 'number':
      return DECIMAL;
    case 'boolean':
      return { type: 'Boolean' };
    case 'array': {
      if (Array.isArray(node.prefixItems)) return undefined;
      const element = cedarTypeOf(node.items);
      return element === undefined ? undefined : { type: 'Set', element };
    }
    case 'object':
      return recordType(node);
    default:
      return undefined;
  }
}

function recordType(node: JsonSchema): CedarType | undefined {
  const properties = node.properties;
  if (typeof properties !== 'object' || properties === null) return undefined;
  const required = new Set(Array.isArray(node.required) ? (node.required as unknown[]) : []);
  const attributes: Record<string, CedarAttribute> = {};
  for (const [name, property] of Object.entries(properties as Record<string, unknown>)) {
    const nullable = acceptsNull(property);
    const type = cedarTypeOf(property);
    if (type === undefined) continue;
    attributes[name] = { ...type, required: required.has(name) && !nullable };
  }
  return { type: 'Record', attributes };
}

function acceptsNull(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const node = schema as JsonSchema;
  if (node.type === 'null') return true;
  if (Array.isArray(node.type) && node.type.includes('null')) return true;
  return Array.isArray(node.anyOf) && node.anyOf.some(acceptsNull);
}

function unionType(members: readonly unknown[]): CedarType | undefined {
  const typed = members.filter((m) => !acceptsNullOnly(m)).map(cedarTypeOf);
  if (typed.length === 0) return undefined;
  return typed.reduce<CedarType | undefined>(
    (merged, next) => (merged === undefined || next === undefined ? undefined : commonType(merged, next)),
    typed[0],
  );
}

function acceptsNullOnly(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && (schema as JsonSchema).type === 'null';
}

/**
 * The type both `a` and `b` values satisfy: equal scalars; sets of a common element; records with
 * the attributes whose types are common (required only where both require them; an attribute only
 * one has becomes optional). `undefined` when there is none. Used for a union and for the versions
 * of one tool, which share one Cedar action.
 */
export function commonType(a: CedarType, b: CedarType): CedarType | undefined {
  if (a.type === 'Record' && b.type === 'Record') {
    const attributes: Record<string, CedarAttribute> = {};
    for (const name of new Set([...Object.keys(a.attributes), ...Object.keys(b.attributes)])) {
      const x = a.attributes[name];
      const y = b.attributes[name];
      if (x === undefined || y === undefined) {
        const only = (x ?? y)!;
        attributes[name] = { ...only, required: false };
        continue;
      }
      const type = commonType(x, y);
      if (type !== undefined) attributes[name] = { ...type, required: x.required && y.required };
    }
    return { type: 'Record', attributes };
  }
  if (a.type === 'Set' && b.type === 'Set') {
    const element = commonType(a.element, b.element);
    return element === undefined ? undefined : { type: 'Set', element };
  }
  return a.type === b.type ? a : undefined;
}

/** The type as the Cedar schema's JSON form writes it. */
export function schemaTypeJson(type: CedarType, required?: boolean): TypeOfAttribute<string> {
  const req = required === undefined ? {} : { required };
  switch (type.type) {
    case 'Set':
      return { type: 'Set', element: schemaTypeJson(type.element), ...req };
    case 'Record':
      return {
        type: 'Record',
        attributes: Object.fromEntries(
          Object.entries(type.attributes).map(([name, attr]) => [name, schemaTypeJson(attr, attr.required)]),
        ),
        ...req,
      };
    case 'Extension':
      return { type: 'Extension', name: type.name, ...req };
    default:
      return { type: type.type, ...req };
  }
}

/**
 * A JSON value as a Cedar value of `type`, or `undefined` when it does not fit: a wrong JS type, a
 * number with more than four decimal places or outside ±2^53/10^4 for a decimal, an integer that is
 * not safe for a Long. Record attributes that do not fit (and nulls) are left out, so the value is
 * as complete as it can honestly be: a policy that reads a left-out attribute gets an evaluation
 * error, which the engine turns into a refusal (fail closed) — never a silent pass.
 */
export function toCedarValue(value: unknown, type: CedarType): CedarValueJson | undefined {
  switch (type.type) {
    case 'String':
      return typeof value === 'string' ? value : undefined;
    case 'Boolean':
      return typeof value === 'boolean' ? value : undefined;
    case 'Long':
      return Number.isSafeInteger(value) ? (value as number) : undefined;
    case 'Extension': {
      const text = typeof value === 'number' ? decimalText(value) : undefined;
      return text === undefined ? undefined : decimalValue(text);
    }
    case 'Set': {
      if (!Array.isArray(value)) return undefined;
      const out: CedarValueJson[] = [];
      for (const item of value) {
        const converted = toCedarValue(item, type.element);
        if (converted === undefined) return undefined;
        out.push(converted);
      }
      return out;
    }
    case 'Record': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
      const out: Record<string, CedarValueJson> = {};
      for (const [name, attr] of Object.entries(type.attributes)) {
        if (!Object.hasOwn(value, name)) continue;
        const converted = toCedarValue((value as Record<string, unknown>)[name], attr);
        if (converted !== undefined) out[name] = converted;
      }
      return out;
    }
  }
}

/** A Cedar `decimal` value from its text. */
export function decimalValue(text: string): CedarValueJson {
  return { __extn: { fn: 'decimal', arg: text } };
}

/**
 * A number as fixed-point units of 10^-4 (49.99 → 499900), or `undefined` when it has more than
 * four decimal places or its units are not a safe integer. Exact: the units, divided back, give the
 * same double.
 */
export function toUnits(value: number): number | undefined {
  if (!Number.isFinite(value)) return undefined;
  const units = Math.round(value * SCALE);
  if (!Number.isSafeInteger(units) || units / SCALE !== value) return undefined;
  return units;
}

/** Units of 10^-4 as Cedar decimal text: 499900 → "49.9900", -5 → "-0.0005". */
export function unitsText(units: number): string {
  const sign = units < 0 ? '-' : '';
  const abs = Math.abs(units);
  const whole = Math.floor(abs / SCALE);
  const fraction = String(abs % SCALE).padStart(DECIMAL_PLACES, '0');
  return `${sign}${whole}.${fraction}`;
}

/** A number as Cedar decimal text, or `undefined` when a decimal cannot hold it exactly. */
export function decimalText(value: number): string | undefined {
  const units = toUnits(value);
  return units === undefined ? undefined : unitsText(units);
}

/**
 * The keywords of {@link OPENAI_STRICT_KEYWORDS} whose value holds no sub-schema and needs no
 * check against the subset (`format` does: see {@link OPENAI_STRICT_FORMATS}), so an exporter may
 * copy them as they are.
 */
export const OPENAI_STRICT_VERBATIM_KEYWORDS: readonly string[] = [
  'type',
  'enum',
  'const',
  '$ref',
  'description',
  'pattern',
  'multipleOf',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
];

/**
 * The JSON Schema subset OpenAI accepts for `strict: true` function tools, as documented in the
 * Structured Outputs guide ("Supported schemas"). Shared by the exporter (which produces it) and the
 * checker (which proves an export, or a hand-written tool, stays inside it).
 *
 * Kept: `type` (including `[T, "null"]`), `properties`, `required`, `additionalProperties` (must be
 * false), `items`, `anyOf` (not at the root), `enum`, `const`, `description`, `$ref`/`$defs`
 * (`definitions` for draft-7 input); strings: `pattern`, `format` (only {@link OPENAI_STRICT_FORMATS});
 * numbers: `multipleOf`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`; arrays:
 * `minItems`, `maxItems`.
 *
 * Not supported, so never sent: `allOf`, `not`, `if`/`then`/`else`, `dependentRequired`,
 * `dependentSchemas`, `oneOf` (rewritten to `anyOf`), `minLength`/`maxLength` (not in the documented
 * list), `default`, `examples`, `title`, `propertyNames`, `patternProperties`, `minProperties`,
 * `maxProperties`, `uniqueItems`, `prefixItems`/tuple `items`, `contains`.
 */
export const OPENAI_STRICT_KEYWORDS: ReadonlySet<string> = new Set([
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  '$defs',
  'definitions',
  'format',
  ...OPENAI_STRICT_VERBATIM_KEYWORDS,
]);

/** String formats strict mode accepts; any other `format` (e.g. `uri`) makes the API refuse the tool. */
export const OPENAI_STRICT_FORMATS: ReadonlySet<string> = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);

/** Size limits a strict schema is checked against. */
export interface OpenAIStrictLimits {
  /** Levels of object nesting, the root object being level 1. */
  readonly maxNestingDepth: number;
  /** Object properties counted over the whole schema, `$defs` included. */
  readonly maxProperties: number;
  /** Enum values counted over the whole schema. */
  readonly maxEnumValues: number;
  /** Summed length of property names, definition names, enum values and const values. */
  readonly maxTotalStringLength: number;
}

/**
 * The limits checked by default. Depth 5 and 100 properties are the limits OpenAI first published
 * for strict mode; its current guide allows 10 levels and 5,000 properties. The stricter pair is the
 * default because a schema within it is accepted by both and because accuracy on deeply nested
 * arguments drops long before either limit (about two levels, under ten leaf fields);
 * pass `{ maxNestingDepth: 10, maxProperties: 5000 }` to check against the current API ceiling only.
 */
export const OPENAI_STRICT_LIMITS: OpenAIStrictLimits = Object.freeze({
  maxNestingDepth: 5,
  maxProperties: 100,
  maxEnumValues: 1000,
  maxTotalStringLength: 120_000,
});

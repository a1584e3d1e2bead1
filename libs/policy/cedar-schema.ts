import type { SchemaJson, TypeOfAttribute } from '@cedar-policy/cedar-wasm/nodejs';
import { inputJsonSchema } from '../registry/input-json-schema.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import { isCount, type AggregateFact } from './aggregate-fact.js';
import { cedarTypeOf, commonType, schemaTypeJson, type CedarType } from './cedar-types.js';

/** The Cedar namespace of toolgate's policies. */
export const NAMESPACE = 'Toolgate';
/** Entity type names, qualified as policies write them. */
export const PRINCIPAL_TYPE = `${NAMESPACE}::Principal`;
export const TOOL_TYPE = `${NAMESPACE}::Tool`;
export const ACTION_TYPE = `${NAMESPACE}::Action`;

/** What the engine derived from the tools: the Cedar schema, and each tool's argument type. */
export interface DerivedSchema {
  readonly schema: SchemaJson<string>;
  /** Per tool name: the record type its arguments are converted with (shared by its versions). */
  readonly argsTypes: ReadonlyMap<string, CedarType & { readonly type: 'Record' }>;
}

const EMPTY_RECORD: CedarType & { readonly type: 'Record' } = { type: 'Record', attributes: {} };

/**
 * The Cedar schema business rules are validated against, derived from the tools at start-up:
 *
 * - `principal`: `Toolgate::Principal` with `tenant` (String), `roles` and `scopes` (Set<String>),
 *   all from the verified principal;
 * - `action`: `Toolgate::Action::"<tool name>"`, one per tool name (its versions share it: an
 *   argument whose type differs between versions is left out, one only some have is optional);
 * - `resource`: `Toolgate::Tool::"<tool name>"`;
 * - `context.args`: the tool's arguments, typed from its input schema (see `cedarTypeOf`);
 * - `context.facts`: the aggregate facts declared for the tool (decimal sums, Long counts).
 */
export function deriveSchema(
  tools: readonly ToolDefinition[],
  facts: readonly AggregateFact[],
): DerivedSchema {
  const argsTypes = new Map<string, CedarType & { readonly type: 'Record' }>();
  for (const tool of tools) {
    const own = cedarTypeOf(inputJsonSchema(tool));
    const record = own?.type === 'Record' ? own : EMPTY_RECORD;
    const seen = argsTypes.get(tool.name);
    const merged = seen === undefined ? record : commonType(seen, record);
    argsTypes.set(tool.name, merged?.type === 'Record' ? merged : EMPTY_RECORD);
  }
  const actions: SchemaJson<string>[string]['actions'] = {};
  for (const [name, args] of argsTypes) {
    const factAttributes: Record<string, TypeOfAttribute<string>> = {};
    for (const fact of facts) {
      if (!fact.tools.includes(name)) continue;
      factAttributes[fact.name] = isCount(fact)
        ? { type: 'Long', required: true }
        : { type: 'Extension', name: 'decimal', required: true };
    }
    actions[name] = {
      appliesTo: {
        principalTypes: ['Principal'],
        resourceTypes: ['Tool'],
        context: {
          type: 'Record',
          attributes: {
            args: schemaTypeJson(args, true),
            facts: { type: 'Record', attributes: factAttributes, required: true },
          },
        },
      },
    };
  }
  const schema: SchemaJson<string> = {
    [NAMESPACE]: {
      entityTypes: {
        Principal: {
          shape: {
            type: 'Record',
            attributes: {
              tenant: { type: 'String', required: true },
              roles: { type: 'Set', element: { type: 'String' }, required: true },
              scopes: { type: 'Set', element: { type: 'String' }, required: true },
            },
          },
        },
        Tool: {},
      },
      actions,
    },
  };
  return { schema, argsTypes };
}

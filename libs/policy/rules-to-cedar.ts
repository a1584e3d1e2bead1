import type { CedarType } from './cedar-types.js';
import { decimalText } from './cedar-types.js';
import { ACTION_TYPE } from './cedar-schema.js';
import { PolicyRulesError, type PolicyCheck, type PolicyRule } from './policy-rule.js';

type Literal = string | number | boolean;

/**
 * Translates rules written as JSON data ({@link PolicyRule}) into Cedar `forbid` policies, so one
 * engine decides every rule. Each rule keeps its id, reason and alternative as annotations; in the
 * reason, `{value}` becomes the argument's value and `{limit}` the rule's limit. A rule for `*`
 * binds every tool that has the field (a tool without it is not bound by it), in one policy.
 *
 * Throws {@link PolicyRulesError} naming the rule when it cannot be translated faithfully: a field
 * no governed tool has (or one addressed through an array index), a check the field's type does
 * not support (`max` on a string, `oneOf` literals of another type), or `maxItems`, which Cedar
 * cannot count (bound an array's length in the tool's schema instead).
 */
export function rulesToCedar(
  rules: readonly PolicyRule[],
  argsTypes: ReadonlyMap<string, CedarType & { readonly type: 'Record' }>,
): string {
  const policies: string[] = [];
  for (const rule of rules) {
    const segments = rule.field.split('.');
    if (segments.some((s) => /^\d+$/.test(s))) {
      throw ruleError(rule, `field "${rule.field}": array items cannot be addressed by index in a policy.`);
    }
    const tools = rule.tool === '*' ? [...argsTypes.keys()] : [rule.tool];
    const targets = tools.flatMap((tool) => {
      const args = argsTypes.get(tool);
      if (args === undefined) throw ruleError(rule, `no tool is named "${tool}".`);
      const type = typeAt(args, segments);
      if (type === undefined && rule.tool !== '*') {
        throw ruleError(rule, `tool ${tool} has no field "${rule.field}" a policy can read.`);
      }
      return type === undefined ? [] : [{ tool, type }];
    });
    if (targets.length === 0) throw ruleError(rule, `no tool has a field "${rule.field}".`);
    policies.push(policyText(rule, targets, segments));
  }
  return policies.join('\n\n');
}

function typeAt(record: CedarType, segments: readonly string[]): CedarType | undefined {
  let type: CedarType | undefined = record;
  for (const segment of segments) {
    if (type?.type !== 'Record') return undefined;
    type = type.attributes[segment];
  }
  return type;
}

/**
 * One `forbid` policy for the rule over the tools it binds. A rule over several tools (`*`) names
 * them all in its scope and checks, per tool, the field as that tool types it
 * (`action == A::"t1" && …) || (action == A::"t2" && …)`), so it keeps one `@id`.
 */
function policyText(
  rule: PolicyRule,
  targets: readonly { readonly tool: string; readonly type: CedarType }[],
  segments: readonly string[],
): string {
  const guards = segments.map(
    (segment, i) =>
      `${accessPath(segments.slice(0, i))} has ${IDENTIFIER.test(segment) ? segment : cedarString(segment)}`,
  );
  const value = accessPath(segments);
  const checks = (type: CedarType) => [...guards, violation(rule, rule.check, value, type)].join(' && ');
  const action = (tool: string) => `${ACTION_TYPE}::${cedarString(tool)}`;
  const scope =
    targets.length === 1
      ? `action == ${action(targets[0]!.tool)}`
      : `action in [${targets.map((t) => action(t.tool)).join(', ')}]`;
  const field =
    targets.length === 1
      ? checks(targets[0]!.type)
      : `(${targets.map((t) => `(action == ${action(t.tool)} && ${checks(t.type)})`).join(' || ')})`;
  const conditions = [...whenConditions(rule), field];
  const reason = rule.reason.replace(/\{(value|limit)\}/g, (_, name: string) =>
    name === 'value' ? `{args.${rule.field}}` : limitText(rule.check),
  );
  const annotations = [
    `@id(${cedarString(rule.id)})`,
    `@reason(${cedarString(reason)})`,
    ...(rule.alternative === undefined ? [] : [`@alternative(${cedarString(rule.alternative)})`]),
  ];
  return [
    ...annotations,
    `forbid (principal, ${scope}, resource)`,
    `when { ${conditions.join(' && ')} };`,
  ].join('\n');
}

function whenConditions(rule: PolicyRule): string[] {
  const out: string[] = [];
  if (rule.when?.roles !== undefined) {
    out.push(`principal.roles.containsAny([${rule.when.roles.map(cedarString).join(', ')}])`);
  }
  if (rule.when?.tenants !== undefined) {
    out.push(`[${rule.when.tenants.map(cedarString).join(', ')}].contains(principal.tenant)`);
  }
  return out;
}

function violation(rule: PolicyRule, check: PolicyCheck, value: string, type: CedarType): string {
  if ('max' in check || 'min' in check) {
    const max = 'max' in check;
    const limit = max ? check.max : check.min;
    if (type.type === 'Long') {
      return max ? `${value} > ${Math.floor(limit)}` : `${value} < ${Math.ceil(limit)}`;
    }
    if (type.type === 'Extension') {
      return `${value}.${max ? 'greaterThan' : 'lessThan'}(${decimalLiteral(rule, limit)})`;
    }
    throw ruleError(rule, `${max ? 'max' : 'min'} needs a number field; "${rule.field}" is ${type.type}.`);
  }
  if ('oneOf' in check || 'noneOf' in check) {
    const listed = 'oneOf' in check ? check.oneOf : check.noneOf;
    const set = `[${listed.map((v) => literal(rule, v, type)).join(', ')}].contains(${value})`;
    return 'oneOf' in check ? `!${set}` : set;
  }
  throw ruleError(rule, 'maxItems cannot be checked by a policy; bound the array in the tool schema.');
}

function literal(rule: PolicyRule, value: Literal, type: CedarType): string {
  if (type.type === 'String' && typeof value === 'string') return cedarString(value);
  if (type.type === 'Boolean' && typeof value === 'boolean') return String(value);
  if (type.type === 'Long' && Number.isSafeInteger(value)) return String(value);
  if (type.type === 'Extension' && typeof value === 'number') return decimalLiteral(rule, value);
  throw ruleError(rule, `${JSON.stringify(value)} cannot be compared with "${rule.field}" (${type.type}).`);
}

function decimalLiteral(rule: PolicyRule, value: number): string {
  const text = decimalText(value);
  if (text === undefined) throw ruleError(rule, `${value} has more than four decimal places.`);
  return `decimal(${cedarString(text)})`;
}

function limitText(check: PolicyCheck): string {
  if ('max' in check) return String(check.max);
  if ('min' in check) return String(check.min);
  if ('oneOf' in check) return check.oneOf.map(String).join(', ');
  if ('noneOf' in check) return check.noneOf.map(String).join(', ');
  return String(check.maxItems);
}

function accessPath(segments: readonly string[]): string {
  return ['context.args', ...segments.map(attributeName)].reduce((path, name) =>
    name.startsWith('[') ? `${path}${name}` : `${path}.${name}`,
  );
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An attribute as an access path writes it: `.name` when an identifier, else `["…"]`. */
function attributeName(segment: string): string {
  return IDENTIFIER.test(segment) ? segment : `[${cedarString(segment)}]`;
}

/** A Cedar string literal: backslash, quote and control characters escaped. */
export function cedarString(text: string): string {
  // eslint-disable-next-line no-control-regex -- escaping control characters is the point
  const body = text.replace(/[\\"\u0000-\u001f\u007f]/g, (c) => {
    if (c === '\\') return '\\\\';
    if (c === '"') return '\\"';
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return `\\u{${c.charCodeAt(0).toString(16)}}`;
  });
  return `"${body}"`;
}

function ruleError(rule: PolicyRule, message: string): PolicyRulesError {
  return new PolicyRulesError(`Rule "${rule.id}": ${message}`);
}

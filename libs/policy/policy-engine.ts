import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import type { CedarValueJson, DetailedError, PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import { deepFreeze } from '../core/deep-freeze.js';
import type { ExecutionContext } from '../core/types.js';
import type { FactValues, PolicyDecision, PolicyEngine } from '../pipeline/deps.js';
import type { AnyToolDefinition, ToolDefinition } from '../registry/tool-definition.js';
import { aggregateFactSchema, isCount, type AggregateFact } from './aggregate-fact.js';
import { decimalValue, toCedarValue, unitsText, type CedarType } from './cedar-types.js';
import { ACTION_TYPE, deriveSchema, PRINCIPAL_TYPE, TOOL_TYPE } from './cedar-schema.js';
import { readPath } from './field-path.js';
import { parsePolicyRules, PolicyRulesError, type PolicyRule } from './policy-rule.js';
import { rulesToCedar } from './rules-to-cedar.js';

/**
 * A policy as its author writes it: business rules in Cedar, or as JSON rules (translated to Cedar),
 * or both, plus the aggregate facts they read.
 */
export interface PolicySource {
  /** Identifies this policy: bound into preview tokens, recorded in every audit record. Non-empty. */
  readonly version: string;
  /**
   * Cedar `forbid` policies, each annotated `@id("…")` (unique) and `@reason("…")` (model-readable;
   * `{args.<path>}` and `{facts.<name>}` are filled in), optionally `@alternative("…")`: what the
   * caller can legitimately do instead — it makes the refusal retryable, so never name a way around
   * the rule. A call is refused when any policy forbids it; the first such policy in the text
   * answers. `permit` policies are refused at load: who may call a tool is decided by its scopes
   * and resource rule, business rules only take away.
   */
  readonly cedar?: string;
  /** Rules as JSON data (see {@link PolicyRule}); they follow the Cedar text. */
  readonly rules?: readonly PolicyRule[];
  /** The aggregate facts the rules read (`context.facts.<name>`). */
  readonly facts?: readonly AggregateFact[];
}

/** One business rule as loaded: where it stands and what it says when it refuses. */
interface LoadedRule {
  readonly id: string;
  readonly text: string;
  readonly reason: string;
  readonly alternative?: string;
  /** The tools it governs; `undefined` for every tool. */
  readonly tools?: ReadonlySet<string>;
  /** The top-level arguments it reads (`context.args.x`, `context.args has x`), or `all`. */
  readonly argumentsRead: ReadonlySet<string> | 'all';
}

let preparsedCount = 0;

/** The id of the permit-all policy business rules take away from (not available to a rule). */
const BASE_POLICY_ID = 'toolgate-base';

/**
 * Builds the business-rule engine of stage 4 from a {@link PolicySource}, checked against `tools`.
 *
 * Load (throws {@link PolicyRulesError}, so a process with a bad policy does not start):
 * - the Cedar text is parsed, every policy must be a `forbid` with a unique `@id` and a `@reason`;
 * - the policies are validated (Cedar's strict mode) against the schema derived from the tools'
 *   input schemas and the declared facts: a misspelt field, a type mismatch (`"50" < 10`), reading
 *   an optional field without `has`, an unknown tool or fact — each is reported with its line and
 *   column and Cedar's hint ("did you mean `amount`?");
 * - JSON rules are translated first (see `rulesToCedar`), facts are checked (each names known
 *   tools; a summed field is a number of every one of them).
 *
 * Evaluate (pure, synchronous, deterministic: same input, same answer):
 * - a tool no policy governs is allowed without consulting Cedar;
 * - the arguments are passed typed as the schema says; a call with a value Cedar cannot hold (a
 *   number with more than four decimal places, say) is refused ("could not be checked", naming the
 *   tool's first rule): left out, it would look absent to `has`, and a rule guarded by it would pass;
 * - an evaluation error in a `forbid` (a fact not given, an overflow) is a refusal here, never a
 *   pass (Cedar itself would skip the policy);
 * - a refusal names the first refusing policy in text order, with its reason filled in.
 */
export function createPolicyEngine(source: PolicySource, tools: readonly AnyToolDefinition[]): PolicyEngine {
  const version = source.version;
  if (typeof version !== 'string' || version.length === 0) {
    throw new PolicyRulesError('A policy version must be a non-empty string.');
  }
  const facts = parseFacts(source.facts ?? [], tools);
  const { schema, argsTypes } = deriveSchema(tools, facts);
  for (const fact of facts) checkSummed(fact, argsTypes);
  const translated = rulesToCedar(parsePolicyRules(structuredClone(source.rules ?? [])), argsTypes);
  const text = [source.cedar ?? '', translated].filter((t) => t.trim().length > 0).join('\n\n');
  const rules = loadRules(text, schema);
  const byTool = new Map<string, LoadedRule[]>();
  for (const name of argsTypes.keys()) {
    byTool.set(
      name,
      rules.filter((r) => r.tools === undefined || r.tools.has(name)),
    );
  }
  const factsByTool = new Map<string, readonly AggregateFact[]>(
    [...argsTypes.keys()].map((name) => [name, facts.filter((f) => f.tools.includes(name))]),
  );
  const order = new Map(rules.map((r, i) => [r.id, i]));
  const setId = `toolgate-policy-${++preparsedCount}`;
  if (rules.length > 0) {
    expectSuccess(
      cedar.preparsePolicySet(setId, {
        staticPolicies: Object.fromEntries<string>([
          [BASE_POLICY_ID, 'permit(principal, action, resource);'],
          ...rules.map((r): [string, string] => [r.id, r.text]),
        ]),
      }),
      'preparse the policy set',
    );
    expectSuccess(cedar.preparseSchema(setId, schema), 'preparse the schema');
  }

  return {
    version,
    factsOf: (tool) => factsByTool.get(tool) ?? [],
    argumentsRead(tool) {
      const read = new Set<string>();
      for (const rule of byTool.get(tool) ?? []) {
        if (rule.argumentsRead === 'all') return 'all';
        for (const name of rule.argumentsRead) read.add(name);
      }
      return read;
    },
    evaluate(tool: ToolDefinition, args: unknown, ctx: ExecutionContext, values?: FactValues) {
      const governing = byTool.get(tool.name) ?? [];
      if (governing.length === 0) return ALLOWED;
      const argsType = argsTypes.get(tool.name)!;
      const unheld = unheldPaths(args, argsType, []);
      if (unheld.length > 0) {
        return unevaluable(governing[0]!.id, `the rules cannot hold the exact value of ${unheld.join(', ')}`);
      }
      const factsContext: Record<string, CedarValueJson> = {};
      for (const fact of factsByTool.get(tool.name) ?? []) {
        const units = values?.[fact.name];
        if (units === undefined) continue;
        factsContext[fact.name] = isCount(fact) ? units : decimalValue(unitsText(units));
      }
      const answer = cedar.statefulIsAuthorized({
        principal: { type: PRINCIPAL_TYPE, id: ctx.principal.id },
        action: { type: ACTION_TYPE, id: tool.name },
        resource: { type: TOOL_TYPE, id: tool.name },
        context: {
          args: toCedarValue(args, argsType) ?? {},
          facts: factsContext,
        },
        entities: [principalEntity(ctx)],
        preparsedPolicySetId: setId,
        preparsedSchemaName: setId,
        validateRequest: false,
      });
      if (answer.type === 'failure') {
        return unevaluable(governing[0]!.id, answer.errors.map((e) => e.message).join('; '));
      }
      const { decision, diagnostics } = answer.response;
      const failed = new Set(diagnostics.errors.map((e) => e.policyId));
      const refusing = [...(decision === 'deny' ? diagnostics.reason : []), ...failed]
        .filter((id) => order.has(id))
        .sort((a, b) => order.get(a)! - order.get(b)!);
      const first = refusing[0];
      if (first === undefined) {
        return decision === 'allow' ? ALLOWED : unevaluable(governing[0]!.id, 'no rule answered');
      }
      const rule = rules[order.get(first)!]!;
      if (failed.has(first) && !(decision === 'deny' && diagnostics.reason.includes(first))) {
        return unevaluable(rule.id, 'a value it reads is missing or cannot be compared');
      }
      return {
        allowed: false,
        ruleId: rule.id,
        reason: fillReason(rule.reason, args, values, factsByTool.get(tool.name) ?? []),
        ...(rule.alternative === undefined ? {} : { alternative: rule.alternative }),
      };
    },
  };
}

const ALLOWED: PolicyDecision = Object.freeze({ allowed: true });

/**
 * The paths of the values `toCedarValue` leaves out although they are given (not null): a number a
 * decimal cannot hold exactly, say. A policy cannot tell such a value from an absent one (`has` is
 * false), so the engine refuses rather than judge without it.
 */
function unheldPaths(value: unknown, type: CedarType, path: readonly string[]): string[] {
  if (value === null || value === undefined) return [];
  if (toCedarValue(value, type) === undefined) return [path.length === 0 ? 'the arguments' : path.join('.')];
  if (type.type === 'Set') {
    return (value as unknown[]).flatMap((item, i) => unheldPaths(item, type.element, [...path, String(i)]));
  }
  if (type.type !== 'Record') return [];
  return Object.entries(type.attributes).flatMap(([name, attr]) =>
    Object.hasOwn(value, name)
      ? unheldPaths((value as Record<string, unknown>)[name], attr, [...path, name])
      : [],
  );
}

/** A summed fact must sum a number argument of every tool it names (checked at load). */
function checkSummed(fact: AggregateFact, argsTypes: ReadonlyMap<string, CedarType>): void {
  if (!('sum' in fact.measure)) return;
  const field = fact.measure.sum;
  for (const tool of fact.tools) {
    let type: CedarType | undefined = argsTypes.get(tool);
    for (const segment of field.split('.'))
      type = type?.type === 'Record' ? type.attributes[segment] : undefined;
    if (type?.type !== 'Long' && type?.type !== 'Extension') {
      throw new PolicyRulesError(
        `Fact "${fact.name}": tool ${tool} has no number argument "${field}" to sum.`,
      );
    }
  }
}

function unevaluable(ruleId: string, detail: string): PolicyDecision {
  return {
    allowed: false,
    ruleId,
    reason: `This call could not be checked against the business rule "${ruleId}" (${detail}), so it was not run.`,
    unevaluable: true,
  };
}

function principalEntity(ctx: ExecutionContext): cedar.EntityJson {
  const strings = (list: unknown): string[] =>
    Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string') : [];
  return {
    uid: { type: PRINCIPAL_TYPE, id: ctx.principal.id },
    attrs: { tenant: ctx.tenant, roles: strings(ctx.principal.roles), scopes: strings(ctx.principal.scopes) },
    parents: [],
  };
}

const MAX_SHOWN_CHARS = 60;

/** Fills `{args.<path>}` and `{facts.<name>}` in one pass (a placeholder inside a value stays). */
function fillReason(
  reason: string,
  args: unknown,
  values: FactValues | undefined,
  facts: readonly AggregateFact[],
): string {
  return reason.replace(/\{(args|facts)\.([^{}]+)\}/g, (whole, scope: string, path: string) => {
    if (scope === 'facts') {
      const fact = facts.find((f) => f.name === path);
      const units = values?.[path];
      if (fact === undefined || units === undefined) return whole;
      return isCount(fact) ? String(units) : trimDecimal(unitsText(units));
    }
    const value = readPath(args, path);
    return value === undefined ? whole : shown(value);
  });
}

function trimDecimal(text: string): string {
  return text.replace(/\.?0+$/, '');
}

function shown(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text;
}

function parseFacts(data: readonly AggregateFact[], tools: readonly ToolDefinition[]): AggregateFact[] {
  const names = new Set(tools.map((t) => t.name));
  const seen = new Set<string>();
  return data.map((raw, i) => {
    const parsed = aggregateFactSchema.safeParse(raw);
    if (!parsed.success) {
      throw new PolicyRulesError(`Invalid fact #${i}:\n${prettify(parsed.error)}`, { cause: parsed.error });
    }
    const fact = deepFreeze(parsed.data) as AggregateFact;
    if (seen.has(fact.name)) throw new PolicyRulesError(`Duplicate fact "${fact.name}".`);
    seen.add(fact.name);
    for (const tool of fact.tools) {
      if (!names.has(tool)) throw new PolicyRulesError(`Fact "${fact.name}": no tool is named "${tool}".`);
    }
    return fact;
  });
}

function prettify(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  return error.issues.map((i) => `  ${i.path.map(String).join('.')}: ${i.message}`).join('\n');
}

/** Parses, checks and validates the policy text; the rules in text order. */
function loadRules(text: string, schema: cedar.SchemaJson<string>): LoadedRule[] {
  if (text.trim().length === 0) return [];
  const parsed = cedar.checkParsePolicySet({ staticPolicies: text });
  if (parsed.type === 'failure') throw loadError('does not parse', text, parsed.errors);
  const parts = cedar.policySetTextToParts(text);
  if (parts.type === 'failure') throw loadError('does not parse', text, parts.errors);
  if (parts.policy_templates.length > 0) {
    throw new PolicyRulesError('Policy templates are not supported in business rules.');
  }
  const problems: string[] = [];
  const rules: LoadedRule[] = [];
  const ids = new Set<string>();
  for (const { part, offset } of inTextOrder(text, parts.policies)) {
    const where = position(text, offset);
    const json = cedar.policyToJson(part);
    if (json.type === 'failure') {
      problems.push(`${where}: ${json.errors.map((e) => e.message).join('; ')}`);
      continue;
    }
    const policy: PolicyJson = json.json;
    const annotations = policy.annotations ?? {};
    const id = annotations.id ?? undefined;
    const reason = annotations.reason ?? undefined;
    if (policy.effect !== 'forbid') {
      problems.push(
        `${where}: business rules are forbid policies; permit is decided by scopes and resource rules`,
      );
    }
    if (id === undefined || id === '') problems.push(`${where}: the policy has no @id("…")`);
    else if (ids.has(id)) problems.push(`${where}: duplicate @id("${id}")`);
    else if (id === BASE_POLICY_ID) problems.push(`${where}: @id("${id}") is reserved`);
    if (reason === undefined || reason === '') problems.push(`${where}: the policy has no @reason("…")`);
    if (id === undefined || reason === undefined) continue;
    ids.add(id);
    const alternative = annotations.alternative ?? undefined;
    if (alternative === '') {
      problems.push(`${where}: @alternative("") offers nothing; leave it out when there is no alternative`);
    }
    const tools = actionTools(policy);
    rules.push({
      id,
      text: part,
      reason,
      argumentsRead: argumentsRead(policy),
      ...(alternative === undefined || alternative === null ? {} : { alternative }),
      ...(tools === undefined ? {} : { tools }),
    });
  }
  if (problems.length > 0) throw new PolicyRulesError(`Invalid policy:\n  ${problems.join('\n  ')}`);
  const validated = cedar.validate({
    schema,
    policies: { staticPolicies: text },
    validationSettings: { mode: 'strict' },
  });
  if (validated.type === 'failure') throw loadError('cannot be validated', text, validated.errors);
  if (validated.validationErrors.length > 0) {
    throw loadError(
      'does not fit the tools',
      text,
      validated.validationErrors.map((e) => e.error),
      rules.map((r) => r.id),
    );
  }
  return rules;
}

/**
 * The policies of the text with their offsets, in text order. Cedar lists them by its own ids
 * (`policy0`, `policy1`, `policy10`, `policy11`, `policy2`, …), which is not text order from the
 * eleventh policy on; each next one is the part found soonest after the previous one (each part is
 * a verbatim piece of the text, so one is always found).
 */
function inTextOrder(text: string, parts: readonly string[]): { part: string; offset: number }[] {
  const left = [...parts];
  const ordered: { part: string; offset: number }[] = [];
  let cursor = 0;
  while (left.length > 0) {
    let next = 0;
    let offset = Number.POSITIVE_INFINITY;
    left.forEach((part, i) => {
      const at = text.indexOf(part, cursor);
      if (at >= 0 && at < offset) [next, offset] = [i, at];
    });
    const [part] = left.splice(next, 1);
    ordered.push({ part: part!, offset });
    cursor = offset + part!.length;
  }
  return ordered;
}

/**
 * The top-level arguments a policy reads: the attribute of every `.` or `has` applied to
 * `context.args`; `all` when `context.args` is used any other way (compared or passed whole).
 */
function argumentsRead(policy: PolicyJson): ReadonlySet<string> | 'all' {
  const read = new Set<string>();
  let whole = false;
  const isArgs = (node: unknown): boolean => {
    const dot = (node as { '.'?: { left?: { Var?: unknown }; attr?: unknown } } | null)?.['.'];
    return dot?.left?.Var === 'context' && dot.attr === 'args';
  };
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(walk);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [op, value] of Object.entries(node)) {
      const access = value as { left?: unknown; attr?: unknown } | null;
      if ((op === '.' || op === 'has') && access !== null && isArgs(access.left)) {
        const attr = Array.isArray(access.attr) ? (access.attr as unknown[])[0] : access.attr;
        if (typeof attr === 'string') read.add(attr);
        else whole = true;
        continue;
      }
      if (isArgs({ [op]: value as unknown })) {
        whole = true;
        continue;
      }
      walk(value);
    }
  };
  walk(policy.conditions);
  return whole ? 'all' : read;
}

/** The tool names a policy's action scope names; `undefined` when it applies to every action. */
function actionTools(policy: PolicyJson): ReadonlySet<string> | undefined {
  const scope = policy.action as { op: string; entity?: { id?: string }; entities?: { id?: string }[] };
  if (scope.op === '==' && scope.entity?.id !== undefined) return new Set([scope.entity.id]);
  if (scope.op === 'in' && scope.entities !== undefined) {
    return new Set(scope.entities.flatMap((e) => (e.id === undefined ? [] : [e.id])));
  }
  if (scope.op === 'in' && scope.entity?.id !== undefined) return new Set([scope.entity.id]);
  return undefined;
}

/**
 * The errors as `line L, column C: message (hint)` lines. Cedar names policies by position when it
 * validates one text (`policy2`); with `ids` (the rules in text order) each is named by its @id.
 */
function loadError(
  what: string,
  text: string,
  errors: readonly DetailedError[],
  ids: readonly string[] = [],
): PolicyRulesError {
  const lines = errors.map((e) => {
    const at = e.sourceLocations?.[0];
    const where = at === undefined ? '' : `${position(text, at.start)}: `;
    const help = e.help === null || e.help === undefined ? '' : ` (${e.help})`;
    return `  ${where}${e.message}${help}`.replace(/policy `policy(\d+)`/g, (whole, n: string) => {
      const id = ids[Number(n)];
      return id === undefined ? whole : `policy "${id}"`;
    });
  });
  return new PolicyRulesError(`The policy ${what}:\n${lines.join('\n')}`);
}

/** `line L, column C` (1-based) of a character offset in the text. */
function position(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}

function expectSuccess(answer: { type: string; errors?: readonly DetailedError[] }, what: string): void {
  if (answer.type !== 'success') {
    throw new PolicyRulesError(
      `Could not ${what}: ${(answer.errors ?? []).map((e) => e.message).join('; ')}`,
    );
  }
}

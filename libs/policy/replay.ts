import type { AuditRecord } from '../core/audit-record.js';
import type { ExecutionContext } from '../core/types.js';
import { REDACTED } from '../pipeline/build-audit-record.js';
import type { FactValues, PolicyEngine, ToolResolver } from '../pipeline/deps.js';

/** What the business rules decided about one call, as recorded or as a candidate would. */
export type RuleVerdict =
  { readonly decision: 'allow' } | { readonly decision: 'refuse'; readonly ruleId: string };

/** One past call whose decision the candidate would change. */
export interface ReplayExample {
  readonly callId: string;
  readonly tool: string;
  readonly tenant: string;
  readonly principalId: string;
  readonly startedAtMs: number;
  /** The audited (allow-listed) arguments. */
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly facts: Readonly<Record<string, string>>;
  readonly recorded: RuleVerdict;
  readonly candidate: RuleVerdict;
}

/** The changes one rule is responsible for. */
export interface RuleChanges {
  /** The candidate's refusing rule (allowed → refused), or the recorded one (refused → allowed). */
  readonly ruleId: string;
  readonly count: number;
  /** The first few, oldest first. */
  readonly examples: readonly ReplayExample[];
}

/** What replaying a candidate policy over past calls found. */
export interface ReplayReport {
  readonly candidateVersion: string;
  /** The versions that judged the replayed calls, with how many each. */
  readonly recordedVersions: Readonly<Record<string, number>>;
  /** Records read; of them, the ones the business rules judged (the only ones replayed). */
  readonly records: number;
  readonly judged: number;
  readonly unchanged: number;
  /** Allowed then, refused by the candidate: by the candidate's rule. */
  readonly newlyRefused: readonly RuleChanges[];
  /** Refused then, allowed by the candidate: by the rule that refused them. */
  readonly newlyAllowed: readonly RuleChanges[];
  /** Refused by both, by another rule: by the candidate's rule. */
  readonly refusedByAnotherRule: readonly RuleChanges[];
  /**
   * Calls the candidate could not judge from what the audit record holds (an argument outside the
   * tool's audit allow-list, a fact the record does not have, a tool no longer in the catalog): by
   * the rule that needed it (or `tool-not-found`).
   */
  readonly notEvaluable: readonly RuleChanges[];
}

/** How many examples a report keeps per rule. */
export const REPLAY_EXAMPLES = 3;

/**
 * Replays a candidate policy over audit records, executing nothing: each call the business rules
 * judged (its record has a `business-rules` decision and a policy context) is evaluated by the
 * candidate with what the record holds — the tool at its recorded version, the allow-listed
 * arguments, the tenant, the principal's verified roles, and the facts as the rules saw them
 * (totals with the call counted) — and compared with the recorded decision.
 *
 * What a replay cannot know, by construction: arguments outside the audit allow-list (a rule
 * reading one is reported not evaluable), the principal's scopes (replayed as none), and facts the
 * recorded policy did not read. Facts are as recorded: a candidate that would have refused an
 * earlier call does not lower the totals later calls saw, so each flip is judged on its own.
 *
 * Pure: records in, report out; records are taken in the order given (oldest first keeps the
 * examples the oldest).
 */
export function replayPolicy(
  records: Iterable<AuditRecord>,
  candidate: PolicyEngine,
  tools: ToolResolver,
): ReplayReport {
  const recordedVersions: Record<string, number> = {};
  const newlyRefused = new Changes();
  const newlyAllowed = new Changes();
  const otherRule = new Changes();
  const notEvaluable = new Changes();
  let count = 0;
  let judged = 0;
  let unchanged = 0;
  for (const record of records) {
    count += 1;
    const recorded = recordedVerdict(record);
    if (recorded === undefined || record.policy === undefined) continue;
    judged += 1;
    recordedVersions[record.policy.version] = (recordedVersions[record.policy.version] ?? 0) + 1;
    const example = (candidateVerdict: RuleVerdict): ReplayExample => ({
      callId: record.callId,
      tool: record.tool,
      tenant: record.tenant,
      principalId: record.principalId,
      startedAtMs: record.startedAtMs,
      arguments: record.arguments,
      facts: record.policy?.facts ?? {},
      recorded,
      candidate: candidateVerdict,
    });
    const resolved = tools.resolve(record.tool, {
      tenant: record.tenant,
      ...(record.toolVersion === undefined ? {} : { version: record.toolVersion }),
    });
    if (!resolved.ok) {
      notEvaluable.add('tool-not-found', example(recorded));
      continue;
    }
    const withheld = Object.keys(record.arguments).filter((k) => record.arguments[k] === REDACTED);
    const needed = candidate.argumentsRead?.(record.tool) ?? 'all';
    const missing = withheld.filter((k) => needed === 'all' || needed.has(k));
    if (missing.length > 0) {
      notEvaluable.add(`needs-withheld-argument:${missing.join(',')}`, example(recorded));
      continue;
    }
    const decision = candidate.evaluate(
      resolved.tool,
      auditedArguments(record.arguments),
      replayContext(record),
      recordedFacts(record.policy.facts ?? {}),
    );
    if (!decision.allowed && decision.unevaluable === true) {
      notEvaluable.add(decision.ruleId, example({ decision: 'refuse', ruleId: decision.ruleId }));
      continue;
    }
    const verdict: RuleVerdict = decision.allowed
      ? { decision: 'allow' }
      : { decision: 'refuse', ruleId: decision.ruleId };
    if (verdict.decision === 'allow' && recorded.decision === 'allow') unchanged += 1;
    else if (verdict.decision === 'refuse' && recorded.decision === 'allow') {
      newlyRefused.add(verdict.ruleId, example(verdict));
    } else if (verdict.decision === 'allow' && recorded.decision === 'refuse') {
      newlyAllowed.add(recorded.ruleId, example(verdict));
    } else if (verdict.decision === 'refuse' && recorded.decision === 'refuse') {
      if (verdict.ruleId === recorded.ruleId) unchanged += 1;
      else otherRule.add(verdict.ruleId, example(verdict));
    }
  }
  return {
    candidateVersion: candidate.version,
    recordedVersions,
    records: count,
    judged,
    unchanged,
    newlyRefused: newlyRefused.list(),
    newlyAllowed: newlyAllowed.list(),
    refusedByAnotherRule: otherRule.list(),
    notEvaluable: notEvaluable.list(),
  };
}

/** The recorded business-rules decision, or `undefined` when the rules did not judge the call. */
function recordedVerdict(record: AuditRecord): RuleVerdict | undefined {
  const decision = record.decisions.find((d) => d.stage === 'business-rules');
  if (decision === undefined) return undefined;
  if (decision.decision === 'pass') return { decision: 'allow' };
  return { decision: 'refuse', ruleId: record.policy?.ruleId ?? 'unknown-rule' };
}

/** The audited arguments without the values the allow-list replaced (a rule reading one cannot judge). */
function auditedArguments(args: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === REDACTED) continue;
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function replayContext(record: AuditRecord): ExecutionContext {
  return {
    tenant: record.tenant,
    taskId: record.taskId,
    step: record.step,
    index: record.index,
    traceId: record.traceId,
    principal: {
      id: record.principalId,
      tenant: record.tenant,
      kind: 'agent',
      scopes: [],
      roles: [...(record.policy?.roles ?? [])],
    },
  };
}

/** Recorded fact texts back to units: "99.98" → 999800 (sums), "3" → 3 (counts; as written). */
export function recordedFacts(facts: Readonly<Record<string, string>>): FactValues {
  const out: Record<string, number> = {};
  for (const [name, text] of Object.entries(facts)) {
    const units = unitsOf(text);
    if (units !== undefined) out[name] = units;
  }
  return out;
}

function unitsOf(text: string): number | undefined {
  const match = /^(-?)(\d+)(?:\.(\d{1,4}))?$/.exec(text);
  if (match === null) return undefined;
  const [, sign, whole, fraction] = match;
  if (fraction === undefined) return Number(`${sign}${whole}`);
  const units = Number(whole) * 10_000 + Number(fraction.padEnd(4, '0'));
  return Number.isSafeInteger(units) ? (sign === '-' ? -units : units) : undefined;
}

class Changes {
  readonly #byRule = new Map<string, { count: number; examples: ReplayExample[] }>();

  add(ruleId: string, example: ReplayExample): void {
    const entry = this.#byRule.get(ruleId) ?? { count: 0, examples: [] };
    entry.count += 1;
    if (entry.examples.length < REPLAY_EXAMPLES) entry.examples.push(example);
    this.#byRule.set(ruleId, entry);
  }

  list(): RuleChanges[] {
    return [...this.#byRule]
      .map(([ruleId, { count, examples }]) => ({ ruleId, count, examples }))
      .sort((a, b) => b.count - a.count || (a.ruleId < b.ruleId ? -1 : 1));
  }
}

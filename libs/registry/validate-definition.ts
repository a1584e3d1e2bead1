import { z } from 'zod';
import { ToolDefinitionError } from './definition-error.js';
import { isSemver } from './semver.js';
import type { StatusCheckSafety, ToolDefinition } from './tool-definition.js';
import { isValidToolName } from './tool-name.js';
import { inputObjectOf, isZodSchema } from './zod-introspect.js';

function isPositiveFinite(n: unknown): n is number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0;
}

function nonEmptyString(s: unknown): s is string {
  return typeof s === 'string' && s.trim().length > 0;
}

function inputProblems(def: ToolDefinition<unknown, unknown>): string[] {
  const object = inputObjectOf(def.input);
  if (object === undefined) {
    return ['input must be a z.object(...) schema: both providers require an object at the root.'];
  }
  const problems: string[] = [];
  try {
    z.toJSONSchema(object, { io: 'input' });
  } catch (err) {
    problems.push(`input cannot be expressed as JSON Schema for the model (${(err as Error).message}).`);
  }
  const keys = new Set(Object.keys(object.shape));
  for (const field of def.auditFields) {
    if (!keys.has(field))
      problems.push(`auditFields names '${field}', which is not a key of the input schema.`);
  }
  problems.push(...decisiveFieldProblems(def, keys));
  return problems;
}

/**
 * Decisive fields are shown to a person in full before a call runs, so each must be a top-level
 * input key (something the call carries) and on `auditFields` (something a person may see).
 */
function decisiveFieldProblems(def: ToolDefinition<unknown, unknown>, keys: ReadonlySet<string>): string[] {
  const decisive: unknown = def.decisiveFields;
  if (decisive === undefined) return [];
  if (!Array.isArray(decisive) || !decisive.every((f): f is string => typeof f === 'string')) {
    return ['decisiveFields must be an array of input keys.'];
  }
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const field of decisive) {
    if (seen.has(field)) problems.push(`decisiveFields names '${field}' twice.`);
    seen.add(field);
    if (!keys.has(field)) {
      problems.push(`decisiveFields names '${field}', which is not a top-level key of the input schema.`);
    } else if (!def.auditFields.includes(field)) {
      problems.push(
        `decisiveFields names '${field}', which is not on auditFields: a person must be allowed to see a decisive field.`,
      );
    }
  }
  return problems;
}

function retryProblems(def: ToolDefinition<unknown, unknown>): string[] {
  const problems: string[] = [];
  const { retry, retrySafety } = def;
  if (
    typeof retry !== 'object' ||
    retry === null ||
    typeof retrySafety !== 'object' ||
    retrySafety === null
  ) {
    return ['retry and retrySafety are required (defineTool fills both).'];
  }
  if (!Number.isSafeInteger(retry.maxAttempts) || retry.maxAttempts < 1) {
    problems.push(`retry.maxAttempts must be an integer >= 1 (got ${String(retry.maxAttempts)}).`);
  }
  if (!(retry.baseDelayMs >= 0) || !(retry.maxDelayMs >= retry.baseDelayMs)) {
    problems.push('retry delays must satisfy 0 <= baseDelayMs <= maxDelayMs.');
  }
  if (def.stateChanging) {
    if (retrySafety.kind === 'read-only') {
      problems.push("a state-changing tool cannot declare retrySafety 'read-only'.");
    } else if (retry.maxAttempts > 1 && retrySafety.kind === 'none') {
      problems.push(
        `a state-changing tool that retries (maxAttempts=${retry.maxAttempts}) needs retrySafety 'forwards-key' ` +
          "or 'status-check': with 'none' a retry after an unknown outcome could apply the effect twice. " +
          'Declare how the downstream deduplicates, or set retry.maxAttempts to 1.',
      );
    }
  } else if (retrySafety.kind !== 'read-only') {
    problems.push(
      `a tool with stateChanging=false must have retrySafety 'read-only' (got '${retrySafety.kind}').`,
    );
  }
  if (retrySafety.kind === 'status-check') problems.push(...statusCheckProblems(def, retrySafety));
  return problems;
}

/**
 * A status-check tool's effect must be fenceable: the executor calls `apply` itself, right after
 * checking its lease, so `execute` must be that very function (defineTool sets it so).
 */
function statusCheckProblems(
  def: ToolDefinition<unknown, unknown>,
  safety: StatusCheckSafety<unknown, unknown>,
): string[] {
  const problems: string[] = [];
  if (typeof safety.check !== 'function') problems.push("retrySafety 'status-check' needs a check function.");
  if (typeof safety.apply !== 'function') {
    problems.push(
      "retrySafety 'status-check' needs an apply function (the one request that makes the effect).",
    );
  } else if (def.execute !== safety.apply) {
    problems.push(
      "a status-check tool's execute must be its retrySafety.apply: the executor fences the effect only there.",
    );
  }
  if (safety.settleMs !== undefined && !(Number.isFinite(safety.settleMs) && safety.settleMs >= 0)) {
    problems.push(`retrySafety.settleMs must be a finite number >= 0 (got ${String(safety.settleMs)}).`);
  }
  return problems;
}

function optionalFieldProblems(def: ToolDefinition<unknown, unknown>): string[] {
  const problems: string[] = [];
  if (def.rateLimit !== undefined) {
    const { capacity, refillPerSecond, per } = def.rateLimit;
    if (!isPositiveFinite(capacity) || !isPositiveFinite(refillPerSecond) || per.length === 0) {
      problems.push('rateLimit needs capacity > 0, refillPerSecond > 0 and at least one bucket in per.');
    }
  }
  if (def.cost !== undefined && !(def.cost.tokensIn >= 0 && def.cost.tokensOut >= 0)) {
    problems.push('cost token estimates must be >= 0.');
  }
  if (
    def.maxResultBytes !== undefined &&
    !(Number.isSafeInteger(def.maxResultBytes) && def.maxResultBytes > 0)
  ) {
    problems.push('maxResultBytes must be a positive integer.');
  }
  if (def.longRunning !== undefined && def.longRunning !== 'optional' && def.longRunning !== 'required') {
    problems.push("longRunning, when given, must be 'optional' or 'required'.");
  }
  if (def.deprecated !== undefined && !nonEmptyString(def.deprecated.reason)) {
    problems.push('deprecated.reason must say why (it is shown to the model).');
  }
  if (def.downstream !== undefined && !nonEmptyString(def.downstream)) {
    problems.push('downstream, when given, must be a non-empty name.');
  }
  return problems;
}

/**
 * Every problem with a tool definition, as sentences; empty when it is valid. Checks the rules both
 * providers and the pipeline rely on: provider name pattern, `MAJOR.MINOR.PATCH` version, non-empty
 * description and owner, an object input schema expressible as JSON Schema, audit fields that are
 * input keys, decisive fields that are input keys on the audit allow-list, coherent retry/retry-safety/state-changing/destructive flags, and sane limits.
 */
export function definitionProblems<I, O>(definition: ToolDefinition<I, O>): string[] {
  const def = definition as unknown as ToolDefinition<unknown, unknown>;
  const problems: string[] = [];
  if (!isValidToolName(def.name)) {
    problems.push('name must match ^[a-zA-Z0-9_-]{1,64}$ (the rule both OpenAI and Anthropic enforce).');
  }
  if (!isSemver(def.version))
    problems.push(`version must be MAJOR.MINOR.PATCH (got '${String(def.version)}').`);
  if (!nonEmptyString(def.description))
    problems.push('description must say when to use the tool; it is empty.');
  if (!nonEmptyString(def.owner)) problems.push('owner must name the owning team.');
  if (!Array.isArray(def.scopes) || !def.scopes.every(nonEmptyString)) {
    problems.push(
      'scopes must be an array of non-empty strings (use [] for a tool anyone in its tenants may see).',
    );
  }
  if (!isZodSchema(def.output)) problems.push('output must be a zod schema.');
  if (typeof def.execute !== 'function') problems.push('execute must be a function.');
  if (!isPositiveFinite(def.timeoutMs)) problems.push('timeoutMs must be a positive number of milliseconds.');
  if (def.destructive && !def.stateChanging) problems.push('a destructive tool must also be stateChanging.');
  if (!Array.isArray(def.auditFields)) problems.push('auditFields must be an array of input keys.');
  else problems.push(...inputProblems(def));
  problems.push(...retryProblems(def), ...optionalFieldProblems(def));
  return problems;
}

/** Throws {@link ToolDefinitionError} listing every problem when the definition is not valid. */
export function assertValidDefinition<I, O>(def: ToolDefinition<I, O>): void {
  const problems = definitionProblems(def);
  if (problems.length > 0) throw new ToolDefinitionError(String(def.name), problems);
}

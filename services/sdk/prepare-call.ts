import { canonicalJson } from '../../libs/core/canonical-json.js';
import { idempotencyKey, taskResourceKey } from '../../libs/core/idempotency-key.js';
import type { ExecutionContext } from '../../libs/core/types.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import type { ToolResolver } from '../../libs/pipeline/deps.js';
import type { TurnCallInput } from './provider-turn.js';
import type { PublishedCall } from './result-inbox.js';

/** Longest resource key the executor accepts; a longer conflict key falls back to the task key. */
const MAX_RESOURCE_KEY_LENGTH = 512;

/** Everything fixed for one call before its first publish, never recomputed afterwards. */
export interface PreparedCall {
  readonly call: PublishedCall;
  /** Position in the turn (0-based), part of the idempotency key. */
  readonly index: number;
  /** Partition key on the calls topic: the tool's conflict key, else {@link taskResourceKey}. */
  readonly resourceKey: string;
  /** Canonical JSON of parsed arguments, or the provider's raw text for unparseable ones. */
  readonly argumentsJson: string;
}

/**
 * Fixes one call's identity: a fresh toolgate call id, the idempotency key and the resource key.
 *
 * - Idempotency key: {@link idempotencyKey} over (tenant, taskId, step, index, tool, arguments). It
 *   depends only on the turn's coordinates and the model's output, so re-running a turn with the
 *   same (taskId, step) reproduces every key, and the executor answers a repeat from its
 *   idempotency store instead of running the tool again. For unparseable arguments the key covers
 *   the raw text, so a repeat of the same bad call collides too.
 * - Resource key: the tool's `conflictKey(validated args, ctx)` when the registry knows the tool
 *   and the arguments validate against its input schema (the same schema the executor validates
 *   with), else the task key. Anything going wrong there (unknown tool, invalid arguments, a
 *   throwing or empty conflict key) falls back to the task key: the key only orders calls, and
 *   the executor refuses what is invalid.
 *
 * Throws ToolgateError SCHEMA_INVALID when parsed arguments are not JSON data the canonical form
 * can hold (nesting deeper than `MAX_JSON_DEPTH`, 256, a number outside the JSON range such as
 * `1e400`, which parses to Infinity): a fault of this call only, which the model can correct. Throws
 * ToolgateError INTERNAL when the coordinates are malformed (see {@link idempotencyKey}).
 */
export async function prepareCall(
  input: Exclude<TurnCallInput, { kind: 'refused' }>,
  ctx: ExecutionContext,
  tools: ToolResolver | undefined,
  callId: string,
): Promise<PreparedCall> {
  const coordinates = { tenant: ctx.tenant, taskId: ctx.taskId, step: ctx.step, index: ctx.index };
  const parsed = input.kind === 'parsed';
  // First, so a refusal names the path inside the arguments (`$.filter.a…`).
  const argumentsJson = parsed ? canonicalJson(input.args) : input.rawArguments;
  const key = idempotencyKey(coordinates, input.tool, parsed ? input.args : input.rawArguments);
  return {
    call: {
      callId,
      providerCallId: input.providerCallId,
      tool: input.tool,
      tenant: ctx.tenant,
      taskId: ctx.taskId,
      idempotencyKey: key,
    },
    index: ctx.index,
    resourceKey: parsed ? await resourceKeyOf(tools, input.tool, input.args, ctx) : taskResourceKey(ctx),
    argumentsJson,
  };
}

/** Fields of a request that are the same for every call of a turn. */
export interface TurnEnvelope {
  readonly step: number;
  readonly principalAssertion: string;
  readonly traceId: string;
  readonly replyTopic: string;
  readonly replyPartition: number;
  readonly deadlineMs: number;
  readonly requestedAtMs: number;
}

/**
 * The calls-topic event of a prepared call. The signed principal assertion is the only credential
 * it carries; tenant, task and step are coordinates, never authorization facts.
 */
export function requestedEvent(prepared: PreparedCall, envelope: TurnEnvelope): ToolCallRequestedEvent {
  const { call } = prepared;
  return {
    callId: call.callId,
    providerCallId: call.providerCallId,
    tool: call.tool,
    toolVersion: null,
    argumentsJson: prepared.argumentsJson,
    tenant: call.tenant,
    taskId: call.taskId,
    step: envelope.step,
    index: prepared.index,
    idempotencyKey: call.idempotencyKey,
    resourceKey: prepared.resourceKey,
    principalAssertion: envelope.principalAssertion,
    traceId: envelope.traceId,
    replyTopic: envelope.replyTopic,
    replyPartition: envelope.replyPartition,
    deadlineMs: envelope.deadlineMs,
    requestedAtMs: envelope.requestedAtMs,
  };
}

async function resourceKeyOf(
  tools: ToolResolver | undefined,
  name: string,
  args: Record<string, unknown>,
  ctx: ExecutionContext,
): Promise<string> {
  if (tools === undefined) return taskResourceKey(ctx);
  try {
    const resolved = tools.resolve(name, { tenant: ctx.tenant });
    if (!resolved.ok || resolved.tool.conflictKey === undefined) return taskResourceKey(ctx);
    const validated = await resolved.tool.input.safeParseAsync(args);
    if (!validated.success) return taskResourceKey(ctx);
    const key: unknown = resolved.tool.conflictKey(validated.data, ctx);
    return typeof key === 'string' && key.length > 0 && key.length <= MAX_RESOURCE_KEY_LENGTH
      ? key
      : taskResourceKey(ctx);
  } catch {
    return taskResourceKey(ctx);
  }
}

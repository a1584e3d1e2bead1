import { canonicalJson, sha256Hex } from './canonical-json.js';
import { ToolgateError } from './errors.js';
import type { ExecutionContext } from './types.js';

/** The part of the context that identifies one logical call. */
export type CallCoordinates = Pick<ExecutionContext, 'tenant' | 'taskId' | 'step' | 'index'>;

/**
 * Version prefix of {@link idempotencyKey}. A changed derivation gets a new prefix, so keys made the old
 * way and the new way never collide.
 */
export const IDEMPOTENCY_KEY_VERSION = 'tg1';

/**
 * The idempotency key of one logical tool call:
 * `tg1:` + hex SHA-256 of the canonical JSON (RFC 8785) of `[tenant, taskId, step, index, tool, args]`.
 *
 * Contract:
 * - Computed ONCE, by the SDK, before the first publish of the call, and then carried unchanged on the
 *   event through every retry, redelivery and executor takeover. Never recompute it inside a retry
 *   loop: a key derived per attempt defeats deduplication.
 * - Deterministic: a retry of the same call (same tenant, task, step, position, tool, arguments)
 *   yields the same key, so the idempotency store sees it as the same call.
 * - Two distinct calls in one turn with equal arguments differ in `index`, so their keys differ and
 *   both run.
 * - Key order inside `args` does not matter; undefined-valued properties count as absent.
 * - The tool version is deliberately not part of the key: re-resolving a call to a newer version must
 *   not make a retry look like a new call.
 *
 * Throws ToolgateError SCHEMA_INVALID when `args` is not JSON data (see {@link canonicalJson}) and
 * INTERNAL when the coordinates are malformed (empty ids, negative or fractional step/index) — a
 * programming error in the caller, not something the model can fix.
 */
export function idempotencyKey(ctx: CallCoordinates, tool: string, args: unknown): string {
  assertCoordinates(ctx, tool);
  const material = canonicalJson([ctx.tenant, ctx.taskId, ctx.step, ctx.index, tool, args]);
  return `${IDEMPOTENCY_KEY_VERSION}:${sha256Hex(material)}`;
}

/**
 * The resource key of a call that names no resource of its own: `<tenant>:task:<taskId>`.
 *
 * Used when the tool declares no conflict key, or when one cannot be derived (unparseable or
 * invalid arguments, a key function that throws, a key too long). It is the call's partition key
 * on the calls topic and the key its claim record carries, so the calls of one task that name no
 * resource run one at a time, in publish order, on one lane. Every writer of a call event (the SDK,
 * the executor when it records the claim, the reconciler when it re-submits a call) uses this one
 * function: a re-submitted call must land on the same lane as the original.
 */
export function taskResourceKey(ctx: Pick<CallCoordinates, 'tenant' | 'taskId'>): string {
  return `${ctx.tenant}:task:${ctx.taskId}`;
}

/**
 * Hex SHA-256 of the canonical JSON of `args`. Stored beside a claimed idempotency key so that the
 * same key arriving with different arguments is detected as a conflict (a caller bug) instead of
 * being answered with the other call's result. Key-order independent; throws like {@link canonicalJson}.
 */
export function argumentsFingerprint(args: unknown): string {
  return sha256Hex(canonicalJson(args));
}

function assertCoordinates(ctx: CallCoordinates, tool: string): void {
  const problems: string[] = [];
  if (typeof ctx.tenant !== 'string' || ctx.tenant.length === 0) problems.push('tenant');
  if (typeof ctx.taskId !== 'string' || ctx.taskId.length === 0) problems.push('taskId');
  if (!Number.isSafeInteger(ctx.step) || ctx.step < 0) problems.push('step');
  if (!Number.isSafeInteger(ctx.index) || ctx.index < 0) problems.push('index');
  if (typeof tool !== 'string' || tool.length === 0) problems.push('tool');
  if (problems.length > 0) {
    throw new ToolgateError('INTERNAL', `Cannot derive an idempotency key: invalid ${problems.join(', ')}.`);
  }
}

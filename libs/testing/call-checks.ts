import { isDeepStrictEqual } from 'node:util';
import type { ToolCallResult } from '../core/types.js';
import type { TurnCallRecord } from './fixture-harness.js';
import type { CallExpectation, CallRef } from './fixture-schema.js';

/** One call as a round saw it: the SDK's view of the call and toolgate's result. */
export interface ObservedCall {
  readonly providerCallId: string;
  readonly tool: string;
  readonly result: ToolCallResult;
  /** The key the SDK fixed before publishing (absent when the call was answered locally). */
  readonly idempotencyKey?: string;
  readonly callId?: string;
}

/** Finds an earlier call by round (1-based) and provider call id. */
export type CallLookup = (ref: CallRef) => ObservedCall | undefined;

/**
 * Compares one observed call with its expectation and returns one message per mismatch, each
 * starting with `round N, call <id> (<tool>)` so a failure names the exact place in the script.
 * When a repeat was expected (DUPLICATE, or a key shared with an earlier call) and did not happen,
 * the message says whether the idempotency key changed, which is almost always the cause.
 */
export function checkCall(
  round: number,
  observed: ObservedCall,
  expected: CallExpectation,
  earlier: CallLookup,
): string[] {
  const where = `round ${round}, call ${observed.providerCallId} (${observed.tool})`;
  const { result } = observed;
  const failures: string[] = [];
  const keyOf = (call: ObservedCall): string => call.result.idempotencyKey ?? call.idempotencyKey ?? '(none)';

  if (result.outcome !== expected.outcome) {
    const got = `${result.outcome}${result.error === undefined ? '' : ` (${result.error.code}: ${result.error.message})`}`;
    const ref = expected.sameKeyAs ?? expected.samePayloadAs;
    const original = ref === undefined ? undefined : earlier(ref);
    let why = '';
    if (expected.outcome === 'DUPLICATE' && original !== undefined) {
      why =
        keyOf(original) === keyOf(observed)
          ? ` — the idempotency key was unchanged (${keyOf(observed)}) yet the repeat was not answered from the idempotency store`
          : ` — the idempotency key changed between retries: ${keyOf(original)} vs ${keyOf(observed)}`;
    }
    failures.push(`${where}: expected outcome ${expected.outcome}, got ${got}${why}`);
  }
  if (expected.errorCode !== undefined && result.error?.code !== expected.errorCode) {
    failures.push(
      `${where}: expected error code ${expected.errorCode}, got ${result.error?.code ?? 'no error'}`,
    );
  }
  for (const text of expected.messageIncludes ?? []) {
    const message = result.error?.message ?? '';
    if (!message.includes(text)) {
      failures.push(`${where}: expected the model-visible message to mention "${text}", got "${message}"`);
    }
  }
  if (expected.toolInvocations !== undefined && result.toolInvocations !== expected.toolInvocations) {
    failures.push(
      `${where}: expected the tool to run ${expected.toolInvocations} time(s), it ran ${result.toolInvocations} time(s)`,
    );
  }
  for (const [field, value] of Object.entries(expected.payloadIncludes ?? {})) {
    const actual = isRecord(result.payload) ? result.payload[field] : undefined;
    if (!isDeepStrictEqual(actual, value)) {
      failures.push(
        `${where}: expected payload.${field} = ${JSON.stringify(value)}, got ${JSON.stringify(actual) ?? 'nothing'}`,
      );
    }
  }
  if (expected.samePayloadAs !== undefined) {
    const original = earlier(expected.samePayloadAs);
    const label = `round ${expected.samePayloadAs.round}, call ${expected.samePayloadAs.call}`;
    if (original === undefined)
      failures.push(`${where}: samePayloadAs names ${label}, which the script never made`);
    else if (!isDeepStrictEqual(original.result.payload, result.payload)) {
      failures.push(
        `${where}: expected the original payload of ${label} ${JSON.stringify(original.result.payload)}, got ${JSON.stringify(result.payload) ?? 'none'}`,
      );
    }
  }
  if (expected.sameKeyAs !== undefined) {
    const original = earlier(expected.sameKeyAs);
    const label = `round ${expected.sameKeyAs.round}, call ${expected.sameKeyAs.call}`;
    if (original === undefined)
      failures.push(`${where}: sameKeyAs names ${label}, which the script never made`);
    else if (keyOf(original) !== keyOf(observed)) {
      failures.push(
        `${where}: expected the idempotency key of ${label}, but the key changed between retries: ${keyOf(original)} vs ${keyOf(observed)}`,
      );
    }
  }
  return failures;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The SDK's view of a call folded with its result. */
export function observe(call: TurnCallRecord, result: ToolCallResult): ObservedCall {
  return {
    providerCallId: call.providerCallId,
    tool: call.tool,
    result,
    ...(call.published === undefined
      ? {}
      : { idempotencyKey: call.published.idempotencyKey, callId: call.published.callId }),
  };
}

import { inputRequired } from '@modelcontextprotocol/server';
import type { ToolgateError } from '../../libs/core/errors.js';
import { toResultError } from '../../libs/core/result-error.js';
import type { Principal, ToolCallResult } from '../../libs/core/types.js';
import { presentParsedCall } from '../../libs/registry/present-call.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { validateArguments } from '../../libs/registry/validate-arguments.js';
import {
  argumentsDigest,
  confirmationRefusalMessage,
  mintConfirmation,
  redeemConfirmation,
  type ConfirmationSettings,
} from './confirmation.js';

/** The key of the confirmation question in `inputRequests` / `inputResponses`. */
export const CONFIRM_INPUT = 'confirm';

/** What the gate decided for one call of a destructive tool. */
export type ConfirmationDecision =
  /** Run `args`: the validated, normalized arguments the person was shown and accepted. */
  | { readonly kind: 'proceed'; readonly args: Record<string, unknown> }
  | { readonly kind: 'ask'; readonly result: ReturnType<typeof inputRequired> }
  | { readonly kind: 'refuse'; readonly result: ToolCallResult };

/** One call of a destructive tool, as the gate sees it. */
export interface GatedCall {
  readonly era: 'legacy' | 'modern';
  readonly principal: Principal;
  readonly tool: ToolDefinition;
  /** The arguments as the client sent them (untrusted, not yet validated). */
  readonly args: Record<string, unknown>;
  /**
   * The logical call (task id) of the given normalized arguments: a retry of the same call may
   * redeem its state again.
   */
  readonly holderOf: (args: Record<string, unknown>) => string;
  /** The echoed `requestState`, raw from the wire (untrusted). */
  readonly requestState: unknown;
  /** The client's `inputResponses` (untrusted). */
  readonly inputResponses: Record<string, unknown> | undefined;
}

/**
 * The human confirmation of a destructive tool, over MCP's input-required flow (2026-07-28). What
 * the person is shown is what runs:
 * - the arguments are first validated and normalized with the tool's input schema (the pipeline's
 *   own check, `validateArguments`): invalid ones are refused SCHEMA_INVALID as the executor would
 *   refuse them — nothing is asked, nothing runs; unknown fields are gone, defaults applied;
 * - the question is `presentParsedCall` of those normalized arguments (decisive fields first and in
 *   full, hidden characters escaped, withheld fields named); a call it cannot present — a decisive
 *   value too long to show — is refused POLICY_VIOLATION and never asked;
 * - first call (no state): ask — an input-required result whose one form question is that text
 *   and asks for `confirm: true`, with a signed, single-use, expiring request state bound to
 *   principal, tool and the digest of the normalized arguments ({@link mintConfirmation});
 * - retried call with a state: refuse when it is forged, tampered, expired, bound to another call
 *   or already used by another call, or when the person did not accept with `confirm: true`
 *   (declining leaves the state unused); else proceed with the normalized arguments — the call runs
 *   once, with exactly what was shown.
 * A 2025-11-25 client has no input-required flow through a stateless endpoint: the call is
 * refused, saying so, and nothing runs. Refusals never run the tool.
 */
export async function confirmationGate(
  settings: ConfirmationSettings,
  call: GatedCall,
): Promise<ConfirmationDecision> {
  if (call.era === 'legacy') {
    return refuse(
      call,
      'This tool changes state irreversibly and needs a person to confirm each call; that needs a client speaking MCP 2026-07-28.',
    );
  }
  const checked = await validateArguments(call.tool, call.args);
  if (!checked.ok) return refuseInvalid(call, checked.error);
  if (!isRecord(checked.args)) {
    return refuse(call, `The arguments of ${call.tool.name} do not normalize to an object; nothing was run.`);
  }
  const args = checked.args;
  if (!isJsonData(args)) {
    // The call is published as JSON: a value that is not JSON data would reach the tool changed.
    return refuse(
      call,
      `The arguments of ${call.tool.name} normalize to values that are not JSON data, so the call that would run cannot be shown; nothing was run.`,
      false,
    );
  }
  const presented = presentParsedCall(call.tool, args);
  if (!presented.ok) return refuse(call, `${presented.reason} Nothing was run.`, false);
  const bound = {
    principal: call.principal,
    tool: call.tool.name,
    version: call.tool.version,
    args,
  };
  if (call.requestState === undefined) {
    return {
      kind: 'ask',
      result: inputRequired({
        inputRequests: {
          [CONFIRM_INPUT]: inputRequired.elicit({
            message: presented.call.text,
            requestedSchema: {
              type: 'object',
              properties: {
                confirm: { type: 'boolean', title: 'Confirm', description: 'Run exactly this call once.' },
              },
              required: ['confirm'],
            },
          }),
        },
        requestState: await mintConfirmation(settings, bound),
      }),
    };
  }
  if (typeof call.requestState !== 'string') return refuse(call, confirmationRefusalMessage('forged'));
  const answer = call.inputResponses?.[CONFIRM_INPUT] as
    { readonly action?: unknown; readonly content?: { readonly confirm?: unknown } } | undefined;
  if (answer?.action !== 'accept' || answer.content?.confirm !== true) {
    // Checked before redeeming: a declined state stays unused, and still expires.
    const redeemed = await peekValid(settings, call.requestState, bound);
    return refuse(call, redeemed ?? 'The call was not confirmed; nothing was run.');
  }
  const redeemed = await redeemConfirmation(settings, call.requestState, bound, call.holderOf(args));
  return redeemed.ok ? { kind: 'proceed', args } : refuse(call, confirmationRefusalMessage(redeemed.refusal));
}

/** Undefined when the state is genuine and bound to this call; else its refusal message. */
async function peekValid(
  settings: ConfirmationSettings,
  state: string,
  bound: Parameters<typeof mintConfirmation>[1],
): Promise<string | undefined> {
  const unused: ConfirmationSettings = {
    ...settings,
    store: {
      consume: () => Promise.resolve('consumed'),
    },
  };
  const checked = await redeemConfirmation(unused, state, bound, '');
  return checked.ok ? undefined : confirmationRefusalMessage(checked.refusal);
}

function refuse(call: GatedCall, message: string, retryable = true): ConfirmationDecision {
  return {
    kind: 'refuse',
    result: {
      callId: 'mcp-call',
      tool: call.tool.name,
      outcome: 'POLICY_VIOLATION',
      error: {
        code: 'POLICY_VIOLATION',
        message,
        retryable,
        ...(retryable ? { suggestedFix: 'Call the tool again and have the user confirm the call.' } : {}),
      },
      toolInvocations: 0,
    },
  };
}

/** Arguments the tool's schema refuses: the executor's SCHEMA_INVALID answer, given before asking. */
function refuseInvalid(call: GatedCall, error: ToolgateError): ConfirmationDecision {
  return {
    kind: 'refuse',
    result: {
      callId: 'mcp-call',
      tool: call.tool.name,
      outcome: 'SCHEMA_INVALID',
      error: toResultError(error),
      toolInvocations: 0,
    },
  };
}

function isJsonData(args: Record<string, unknown>): boolean {
  try {
    argumentsDigest(args);
    return true;
  } catch {
    return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

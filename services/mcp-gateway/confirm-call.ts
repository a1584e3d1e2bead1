import { inputRequired } from '@modelcontextprotocol/server';
import type { Principal, ToolCallResult } from '../../libs/core/types.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import {
  confirmationRefusalMessage,
  mintConfirmation,
  redeemConfirmation,
  type ConfirmationSettings,
} from './confirmation.js';

/** The key of the confirmation question in `inputRequests` / `inputResponses`. */
export const CONFIRM_INPUT = 'confirm';
const PREVIEW_LIMIT = 2000;

/** What the gate decided for one call of a destructive tool. */
export type ConfirmationDecision =
  | { readonly kind: 'proceed' }
  | { readonly kind: 'ask'; readonly result: ReturnType<typeof inputRequired> }
  | { readonly kind: 'refuse'; readonly result: ToolCallResult };

/** One call of a destructive tool, as the gate sees it. */
export interface GatedCall {
  readonly era: 'legacy' | 'modern';
  readonly principal: Principal;
  readonly tool: ToolDefinition;
  readonly args: Record<string, unknown>;
  /** The logical call (task id): a retry of the same call may redeem its state again. */
  readonly holder: string;
  /** The echoed `requestState`, raw from the wire (untrusted). */
  readonly requestState: unknown;
  /** The client's `inputResponses` (untrusted). */
  readonly inputResponses: Record<string, unknown> | undefined;
}

/**
 * The human confirmation of a destructive tool, over MCP's input-required flow (2026-07-28):
 * - first call (no state): ask — an input-required result whose one form question shows the exact
 *   call (tool, arguments) and asks for `confirm: true`, with a signed, single-use, expiring
 *   request state bound to principal, tool and argument digest ({@link mintConfirmation});
 * - retried call with a state: refuse when it is forged, tampered, expired, bound to another call
 *   or already used by another call, or when the person did not accept with `confirm: true`
 *   (declining leaves the state unused); else proceed — the call runs once.
 * A 2025-11-25 client has no input-required flow through a stateless endpoint: the call is
 * refused, saying so, and nothing runs. Refusals are POLICY_VIOLATION, never run the tool.
 */
export async function confirmationGate(
  settings: ConfirmationSettings,
  call: GatedCall,
): Promise<ConfirmationDecision> {
  const bound = {
    principal: call.principal,
    tool: call.tool.name,
    version: call.tool.version,
    args: call.args,
  };
  if (call.era === 'legacy') {
    return refuse(
      call,
      'This tool changes state irreversibly and needs a person to confirm each call; that needs a client speaking MCP 2026-07-28.',
    );
  }
  if (call.requestState === undefined) {
    const preview = `Run ${call.tool.name} with ${JSON.stringify(call.args)}? ${call.tool.description}`;
    return {
      kind: 'ask',
      result: inputRequired({
        inputRequests: {
          [CONFIRM_INPUT]: inputRequired.elicit({
            message: preview.length > PREVIEW_LIMIT ? `${preview.slice(0, PREVIEW_LIMIT)}…` : preview,
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
  const redeemed = await redeemConfirmation(settings, call.requestState, bound, call.holder);
  return redeemed.ok ? { kind: 'proceed' } : refuse(call, confirmationRefusalMessage(redeemed.refusal));
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

function refuse(call: GatedCall, message: string): ConfirmationDecision {
  return {
    kind: 'refuse',
    result: {
      callId: 'mcp-call',
      tool: call.tool.name,
      outcome: 'POLICY_VIOLATION',
      error: {
        code: 'POLICY_VIOLATION',
        message,
        retryable: true,
        suggestedFix: 'Call the tool again and have the user confirm the call.',
      },
      toolInvocations: 0,
    },
  };
}

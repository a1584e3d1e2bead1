import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemorySingleUseStore } from '../../../libs/adapters/memory/single-use-store.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import type { Principal } from '../../../libs/core/types.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import { presentCall } from '../../../libs/registry/present-call.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import {
  CONFIRM_INPUT,
  confirmationGate,
  type ConfirmationDecision,
  type GatedCall,
} from '../../../services/mcp-gateway/confirm-call.js';
import type { ConfirmationSettings } from '../../../services/mcp-gateway/confirmation.js';

const principal = { id: 'payer-ida', tenant: 'acme', scopes: [] } as unknown as Principal;

const transfer = defineTool({
  name: 'transfer_funds',
  version: '1.0.0',
  description: 'Moves money to one account.',
  input: z.object({ k: z.string(), amount: z.number(), memo: z.string().default('none') }),
  output: z.object({}),
  scopes: [],
  owner: 'payments-team',
  destructive: true,
  auditFields: ['k', 'amount', 'memo'],
  decisiveFields: ['amount', 'k'],
  execute: () => Promise.resolve({}),
}) as unknown as ToolDefinition;

function settings(): ConfirmationSettings {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  return { secret: randomBytes(32), store: new MemorySingleUseStore(clock), now: () => clock.now() };
}

function gated(args: Record<string, unknown>, more: Partial<GatedCall> = {}): GatedCall {
  return {
    era: 'modern',
    principal,
    tool: transfer,
    args,
    holderOf: () => 'task-1',
    requestState: undefined,
    inputResponses: undefined,
    ...more,
  };
}

function question(decision: ConfirmationDecision): { message: string; state: string } {
  if (decision.kind !== 'ask') throw new Error(`expected a question, got ${decision.kind}`);
  const result = decision.result as unknown as {
    inputRequests: Record<string, { params: { message: string } }>;
    requestState: string;
  };
  return { message: result.inputRequests[CONFIRM_INPUT]!.params.message, state: result.requestState };
}

const ACCEPT = { [CONFIRM_INPUT]: { action: 'accept', content: { confirm: true } } };

describe('confirmationGate', () => {
  it('asks with presentCall’s text of the normalized call, and proceeds with exactly those arguments', async () => {
    const s = settings();
    const raw = { note: 'n'.repeat(2_100), k: 'K-1', amount: 999_999 };
    const asked = question(await confirmationGate(s, gated(raw)));
    const shown = presentCall(transfer, raw);
    expect(shown.ok && asked.message).toBe(shown.ok ? shown.call.text : undefined);
    const decision = await confirmationGate(
      s,
      gated(raw, { requestState: asked.state, inputResponses: ACCEPT }),
    );
    expect(decision).toEqual({ kind: 'proceed', args: { k: 'K-1', amount: 999_999, memo: 'none' } });
  });

  it('refuses invalid arguments SCHEMA_INVALID before asking', async () => {
    const decision = await confirmationGate(settings(), gated({ k: 'K-1', amount: 'lots' }));
    expect(decision).toMatchObject({
      kind: 'refuse',
      result: {
        outcome: 'SCHEMA_INVALID',
        error: { code: 'SCHEMA_INVALID', retryable: true },
        toolInvocations: 0,
      },
    });
  });

  it('refuses a call whose decisive field cannot be shown, and one that normalizes to non-JSON values', async () => {
    const long = await confirmationGate(settings(), gated({ k: 'K'.repeat(3_000), amount: 1 }));
    expect(long).toMatchObject({
      kind: 'refuse',
      result: { outcome: 'POLICY_VIOLATION', error: { retryable: false }, toolInvocations: 0 },
    });
    const dated = defineTool({
      name: 'schedule_payment',
      version: '1.0.0',
      description: 'Schedules a payment.',
      input: z.object({ on: z.string(), cents: z.string().transform((c) => BigInt(c)) }),
      output: z.object({}),
      scopes: [],
      owner: 'payments-team',
      destructive: true,
      auditFields: ['on', 'cents'],
      execute: () => Promise.resolve({}),
    }) as unknown as ToolDefinition;
    const decision = await confirmationGate(
      settings(),
      gated({ on: '2026-02-01', cents: '500' }, { tool: dated }),
    );
    expect(decision).toMatchObject({ kind: 'refuse', result: { outcome: 'POLICY_VIOLATION' } });
  });
});

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintConfirmation } from '../../../services/mcp-gateway/confirmation.js';
import { connectConfirming } from './mcp-clients.js';
import { createMcpStack, type McpStack } from './mcp-stack.js';
import { CONFIRMED, rawToolsCall } from './raw-modern-call.js';

const SCOPES = 'mcp:tools payments:transfer';
const TOOL = 'transfer_funds';

/** A fresh account reference: each test is its own logical call. */
const account = (): string => `K-${randomBytes(4).toString('hex')}`;

/** The `name: value` lines of a confirmation question, after its heading, up to the withheld line. */
function questionFields(question: string): [string, string][] {
  return question
    .split('\n')
    .slice(1)
    .filter((line) => !line.startsWith('Withheld from view: '))
    .map((line) => {
      const at = line.indexOf(': ');
      return [line.slice(0, at), line.slice(at + 2)];
    });
}

describe('what a person confirms over MCP is what runs', () => {
  let stack: McpStack;
  let token: string;
  beforeAll(async () => {
    stack = await createMcpStack('mcp_render');
    token = await stack.issuer.token({ sub: 'payer-ida', tenant: 'acme', scope: SCOPES });
  }, 60_000);
  afterAll(() => stack?.close());

  it('asks with the decisive amount first and no field the tool drops, then runs exactly the shown call once', async () => {
    const k = account();
    const before = stack.effects.of(TOOL);
    const { client, asked } = await connectConfirming(stack.url, token);
    try {
      const answer = await client.callTool({
        name: TOOL,
        arguments: { note: 'n'.repeat(2_100), k, amount: 999_999 },
      });
      expect(answer.isError).toBeFalsy();
      expect(answer.structuredContent).toEqual({ moved: 999_999 });
    } finally {
      await client.close();
    }
    expect(asked).toHaveLength(1);
    const question = asked[0]!;
    expect(questionFields(question)[0]).toEqual(['amount', '999999']);
    expect(question.split('\n')[0]).toBe('Call transfer_funds (version 1.0.0) with:');
    expect(questionFields(question)).toEqual([
      ['amount', '999999'],
      ['k', k],
      ['memo', 'none'],
    ]);
    expect(question).not.toContain('note');
    expect(question).not.toContain('nnnn');
    // Ran once, with exactly the normalized arguments the question showed.
    expect(stack.effects.of(TOOL)).toBe(before + 1);
    const ran = stack.effects.received(TOOL).at(-1) as Record<string, unknown>;
    expect(ran).toEqual({ k, amount: 999_999, memo: 'none' });
    expect(Object.fromEntries(questionFields(question))).toEqual(
      Object.fromEntries(
        Object.entries(ran).map(([name, value]) => [
          name,
          typeof value === 'string' ? value : JSON.stringify(value),
        ]),
      ),
    );
  });

  it('refuses, without asking, a call whose decisive value is too long to show; the tool never runs', async () => {
    const longK = `K-${'9'.repeat(2_500)}`;
    const before = stack.effects.of(TOOL);
    const { client, asked } = await connectConfirming(stack.url, token);
    try {
      const answer = await client.callTool({ name: TOOL, arguments: { k: longK, amount: 5 } });
      expect(answer.isError).toBe(true);
      expect(answer._meta?.['io.toolgate/result']).toMatchObject({ outcome: 'POLICY_VIOLATION' });
      expect((answer.content as { text?: string }[])[0]?.text).toContain('k (2,502 characters)');
    } finally {
      await client.close();
    }
    expect(asked).toEqual([]);
    // Even with a genuine, accepted state for exactly this call, a call nobody could be shown never runs.
    const state = await mintConfirmation(stack.confirmations, {
      principal: { id: 'payer-ida', tenant: 'acme' },
      tool: TOOL,
      version: '1.0.0',
      args: { k: longK, amount: 5, memo: 'none' },
    });
    const forced = await rawToolsCall(stack.url, token, {
      name: TOOL,
      arguments: { k: longK, amount: 5 },
      requestState: state,
      inputResponses: CONFIRMED,
    });
    expect(forced.result?.isError).toBe(true);
    expect(forced.result?._meta?.['io.toolgate/result']).toMatchObject({ outcome: 'POLICY_VIOLATION' });
    expect(stack.effects.of(TOOL)).toBe(before);
  });

  it('shows hidden and bidirectional characters escaped in the question', async () => {
    const before = stack.effects.of(TOOL);
    const { client, asked } = await connectConfirming(stack.url, token, () => ({ action: 'decline' }));
    try {
      const answer = await client.callTool({
        name: TOOL,
        arguments: { k: 'K-1\u202E9-K', amount: 10, memo: 'fine\u200B\nk: K-2' },
      });
      expect(answer.isError).toBe(true);
    } finally {
      await client.close();
    }
    expect(asked).toHaveLength(1);
    const question = asked[0]!;
    expect(question).toContain('k: K-1\\u{202E}9-K');
    expect(question).toContain('memo: fine\\u{200B}\\u{000A}k: K-2');
    expect(question).not.toMatch(/[\u202E\u200B]/);
    expect(question.split('\n')).toHaveLength(4);
    expect(stack.effects.of(TOOL)).toBe(before);
  });

  it('refuses invalid arguments before asking, as the executor would, and names what is wrong', async () => {
    const before = stack.effects.of(TOOL);
    const { client, asked } = await connectConfirming(stack.url, token);
    try {
      const answer = await client.callTool({ name: TOOL, arguments: { k: account(), amount: 'a lot' } });
      expect(answer.isError).toBe(true);
      expect(answer._meta?.['io.toolgate/result']).toMatchObject({
        outcome: 'SCHEMA_INVALID',
        error: { code: 'SCHEMA_INVALID', retryable: true },
      });
      expect((answer.content as { text?: string }[])[0]?.text).toContain(
        'amount: expected number, received string',
      );
    } finally {
      await client.close();
    }
    expect(asked).toEqual([]);
    expect(stack.effects.of(TOOL)).toBe(before);
  });

  it('binds the confirmation to the normalized call: other arguments with the same meaning pass, other values do not', async () => {
    const k = account();
    const before = stack.effects.of(TOOL);
    const asked = await rawToolsCall(stack.url, token, {
      name: TOOL,
      arguments: { k, amount: 7, note: 'dropped before asking' },
    });
    const state = asked.result?.requestState;
    expect(typeof state).toBe('string');
    const other = await rawToolsCall(stack.url, token, {
      name: TOOL,
      arguments: { k, amount: 700 },
      requestState: state!,
      inputResponses: CONFIRMED,
    });
    expect(other.result?.isError).toBe(true);
    expect(other.result?._meta?.['io.toolgate/result']).toMatchObject({ outcome: 'POLICY_VIOLATION' });
    expect(stack.effects.of(TOOL)).toBe(before);
    // The same call, written with its default spelled out and without the dropped field.
    const same = await rawToolsCall(stack.url, token, {
      name: TOOL,
      arguments: { k, amount: 7, memo: 'none' },
      requestState: state!,
      inputResponses: CONFIRMED,
    });
    expect(same.result?.isError).toBeFalsy();
    expect(stack.effects.of(TOOL)).toBe(before + 1);
    expect(stack.effects.received(TOOL).at(-1)).toEqual({ k, amount: 7, memo: 'none' });
  });
  it('runs one accepted question once, with what it showed, when many calls race with its state', async () => {
    for (let round = 0; round < 5; round += 1) {
      const k = account();
      const before = stack.effects.of(TOOL);
      const asked = await rawToolsCall(stack.url, token, { name: TOOL, arguments: { k, amount: 7 } });
      const state = asked.result!.requestState!;
      // Ten other logical calls of the shown call, and ten calls of other amounts, all at once.
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          rawToolsCall(stack.url, token, {
            name: TOOL,
            arguments: i % 2 === 0 ? { k, amount: 7, note: `n${i}` } : { k, amount: 7 + i },
            requestState: state,
            inputResponses: CONFIRMED,
            meta: { 'io.toolgate/idempotency-key': `race-${round}-${i}` },
          }),
        ),
      );
      expect(answers.filter((a) => a.result?.isError !== true)).toHaveLength(1);
      expect(stack.effects.of(TOOL)).toBe(before + 1);
      expect(stack.effects.received(TOOL).at(-1)).toEqual({ k, amount: 7, memo: 'none' });
    }
  });
});

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintConfirmation } from '../../../services/mcp-gateway/confirmation.js';
import { connectConfirming, connectLegacy, connectModern } from './mcp-clients.js';
import { createMcpStack, type McpStack } from './mcp-stack.js';
import { CONFIRMED, rawToolsCall } from './raw-modern-call.js';

const ADMIN_SCOPES = 'mcp:tools orders:read orders:refund admin:purge';
const PURGE = { confirm: true } as const;

describe('idempotency and confirmation over MCP', () => {
  let stack: McpStack;
  let token: string;
  beforeAll(async () => {
    stack = await createMcpStack('mcp_confirm');
    token = await stack.issuer.token({ sub: 'admin-gus', tenant: 'acme', scope: ADMIN_SCOPES });
  }, 60_000);
  afterAll(() => stack?.close());

  it('gives the same logical call one effect, whichever client repeats it; a new client key is a new call', async () => {
    const args = {
      order_id: `O-${randomBytes(4).toString('hex')}`,
      amount: 12.5,
      currency: 'EUR',
      reason: 'late',
    };
    const before = stack.effects.of('issue_refund');
    const modern = await connectModern(stack.url, token);
    const legacy = await connectLegacy(stack.url, token);
    try {
      const first = await modern.callTool('issue_refund', args);
      const again = await modern.callTool('issue_refund', args);
      const fromOther = await legacy.callTool('issue_refund', args);
      expect(first.structuredContent).toEqual({ refund_id: `R-${args.order_id}`, amount: 12.5 });
      for (const repeat of [again, fromOther]) {
        expect(repeat.structuredContent).toEqual(first.structuredContent);
        expect(repeat._meta?.['io.toolgate/result']).toMatchObject({ outcome: 'DUPLICATE' });
      }
      expect(stack.effects.of('issue_refund')).toBe(before + 1);
      const keyed = await modern.callTool('issue_refund', args, {
        'io.toolgate/idempotency-key': 'second-refund',
      });
      expect(keyed._meta?.['io.toolgate/result']).toMatchObject({ outcome: 'SUCCESS' });
      expect(stack.effects.of('issue_refund')).toBe(before + 2);
    } finally {
      await Promise.all([modern.close(), legacy.close()]);
    }
  });

  it('runs a destructive tool once the official client’s user confirmed it', async () => {
    const { client, asked } = await connectConfirming(stack.url, token);
    const before = stack.effects.of('purge_tenant');
    try {
      const answer = await client.callTool({ name: 'purge_tenant', arguments: PURGE });
      expect(answer.isError).toBeFalsy();
      expect(answer.structuredContent).toEqual({ purged: true });
    } finally {
      await client.close();
    }
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('purge_tenant');
    expect(stack.effects.of('purge_tenant')).toBe(before + 1);
  });

  it('asks first and runs nothing until confirmed; a declined answer runs nothing', async () => {
    const before = stack.effects.of('purge_tenant');
    // Its own client key: the purge of the previous test was the same call and stays answered.
    const meta = { 'io.toolgate/idempotency-key': 'purge-after-decline' };
    const asked = await rawToolsCall(stack.url, token, { name: 'purge_tenant', arguments: PURGE, meta });
    expect(asked.result?.resultType).toBe('input_required');
    expect(typeof asked.result?.requestState).toBe('string');
    const declined = await rawToolsCall(stack.url, token, {
      name: 'purge_tenant',
      arguments: PURGE,
      requestState: asked.result!.requestState!,
      inputResponses: { confirm: { action: 'decline' } },
      meta,
    });
    expect(declined.result?.isError).toBe(true);
    expect(stack.effects.of('purge_tenant')).toBe(before);
    // Declining left the state unused: confirming it now runs the call once.
    const confirmed = await rawToolsCall(stack.url, token, {
      name: 'purge_tenant',
      arguments: PURGE,
      requestState: asked.result!.requestState!,
      inputResponses: CONFIRMED,
      meta,
    });
    expect(confirmed.result?.isError).toBeFalsy();
    expect(stack.effects.of('purge_tenant')).toBe(before + 1);
  });

  it('refuses forged, tampered, misbound, expired and replayed confirmation states', async () => {
    const before = stack.effects.of('purge_tenant');
    const principal = { id: 'admin-gus', tenant: 'acme' };
    const bound = { principal, tool: 'purge_tenant', version: '1.0.0', args: PURGE };
    const meta = { 'io.toolgate/idempotency-key': 'purge-with-states' };
    const genuine = (await rawToolsCall(stack.url, token, { name: 'purge_tenant', arguments: PURGE, meta }))
      .result!.requestState!;
    const [header, payload, signature] = genuine.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url')}.${signature}`;
    const states: Record<string, string> = {
      forged: await mintConfirmation({ ...stack.confirmations, secret: randomBytes(32) }, bound),
      tampered,
      'bound to another principal': await mintConfirmation(stack.confirmations, {
        ...bound,
        principal: { id: 'admin-hal', tenant: 'acme' },
      }),
      expired: await mintConfirmation({ ...stack.confirmations, now: () => Date.now() - 3_600_000 }, bound),
      'not a JWT': 'eyJhbGciOiJub25lIn0.e30.',
    };
    for (const [what, state] of Object.entries(states)) {
      const answer = await rawToolsCall(stack.url, token, {
        name: 'purge_tenant',
        arguments: PURGE,
        requestState: state,
        inputResponses: CONFIRMED,
        meta,
      });
      expect(answer.result?.isError, what).toBe(true);
      expect(answer.result?._meta?.['io.toolgate/result'], what).toMatchObject({
        outcome: 'POLICY_VIOLATION',
      });
    }
    expect(stack.effects.of('purge_tenant')).toBe(before);

    const use = (key = meta) =>
      rawToolsCall(stack.url, token, {
        name: 'purge_tenant',
        arguments: PURGE,
        requestState: genuine,
        inputResponses: CONFIRMED,
        meta: key,
      });
    expect((await use()).result?.isError).toBeFalsy();
    expect(stack.effects.of('purge_tenant')).toBe(before + 1);
    // The same call retried (a lost answer): answered from the idempotency store, no second effect.
    expect((await use()).result?._meta?.['io.toolgate/result']).toMatchObject({ outcome: 'DUPLICATE' });
    // Another logical call with the used state: a replay, refused.
    const replay = await use({ 'io.toolgate/idempotency-key': 'another-purge' });
    expect(replay.result?.isError).toBe(true);
    expect(replay.result?.content?.[0]?.text).toContain('already used');
    expect(stack.effects.of('purge_tenant')).toBe(before + 1);
  });

  it('refuses a destructive tool to a 2025-11-25 client, which has no confirmation flow here', async () => {
    const before = stack.effects.of('purge_tenant');
    const legacy = await connectLegacy(stack.url, token);
    try {
      const answer = await legacy.callTool('purge_tenant', PURGE);
      expect(answer.isError).toBe(true);
      expect(answer.content[0]!.text).toContain('2026-07-28');
    } finally {
      await legacy.close();
    }
    expect(stack.effects.of('purge_tenant')).toBe(before);
  });
});

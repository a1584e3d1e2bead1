import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTCOME_UNKNOWN_TEXT } from '../../../services/mcp-gateway/call-result.js';
import { SHIPPING_SCOPE } from '../../fixtures/mcp/gateway-tools.js';
import { connectModern } from './mcp-clients.js';
import { createMcpStack, type McpStack } from './mcp-stack.js';

/** The gateway waits this long for a result; the tool below answers well after. */
const GATEWAY_WAIT_MS = 300;

describe('a call whose answer comes after the gateway stopped waiting', () => {
  let stack: McpStack;
  let token: string;
  beforeAll(async () => {
    stack = await createMcpStack('mcp_unknown', {
      gateway: { callTimeoutMs: GATEWAY_WAIT_MS },
      reconciler: true,
    });
    token = await stack.issuer.token({
      sub: 'user-ivy',
      tenant: 'acme',
      scope: `mcp:tools ${SHIPPING_SCOPE}`,
    });
  }, 60_000);
  afterAll(() => stack?.close());

  it('is answered "outcome unknown — do not retry", never failed; later the same call gets the result, with one effect', async () => {
    const orderId = `O-slow-${Date.now()}`;
    const args = { order_id: orderId, hang_ms: 5_000 };
    const client = await connectModern(stack.url, token);
    try {
      const first = await client.callTool('book_shipment', args);
      expect(first.isError).toBe(true);
      expect(first.content[0]!.text).toContain(OUTCOME_UNKNOWN_TEXT);
      expect(first._meta?.['io.toolgate/result']).toMatchObject({
        outcome: 'UNRESOLVED',
        error: { code: 'UNRESOLVED', retryable: false },
      });
      expect(stack.records.at(-1)).toMatchObject({ outcome: 'tool-unknown-outcome', tool: 'book_shipment' });

      // The executor reports it UNRESOLVED and dead-letters it; the reconciler's status check
      // finds the booking and answers the call SUCCESS on the results topic.
      const [call] = await stack.waitFor('calls', (c) => c.argumentsJson.includes(orderId));
      const answers = await stack.waitFor(
        'results',
        (r) => r.callId === call!.callId && r.outcome !== 'UNRESOLVED',
      );
      expect(answers.map((r) => r.outcome)).toEqual(['SUCCESS']);

      const again = await client.callTool('book_shipment', args);
      expect(again.isError).toBeFalsy();
      expect(again.structuredContent).toEqual({ booking_id: `B-${orderId}` });
      expect(again._meta?.['io.toolgate/result']).toMatchObject({ outcome: 'DUPLICATE' });
    } finally {
      await client.close();
    }
    expect(stack.effects.of('book_shipment')).toBe(1);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../../libs/core/types.js';
import type { ProviderTurn } from '../../../services/sdk/index.js';
import { createEmbeddedStore, type EmbeddedStore } from '../../../services/demo/embedded-store.js';

const desk: Principal = {
  id: 'support-desk:S-1',
  tenant: 't1',
  kind: 'agent',
  onBehalfOf: 'S-1',
  roles: ['support'],
  scopes: ['orders:read', 'refunds:write', 'inventory:write'],
};

let tg: EmbeddedStore | undefined;
afterEach(async () => {
  await tg?.stop();
  tg = undefined;
});

let task = 0;

/** One OpenAI turn calling the given tools with the given raw argument texts. */
function turn(calls: ReadonlyArray<{ tool: string; arguments: string }>): ProviderTurn {
  return {
    provider: 'openai',
    response: {
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: calls.map((c, i) => ({
        id: `call_big_${i}`,
        type: 'function' as const,
        function: { name: c.tool, arguments: c.arguments },
      })),
    },
  };
}

const lookup = { tool: 'lookup_order', arguments: '{"order_id":"O-5512"}' };

describe('embedded toolgate: one bad or big call does not sink its turn', () => {
  it.each([
    [
      'a 5 MB refund',
      {
        tool: 'issue_refund',
        arguments: JSON.stringify({
          order_id: 'O-5512',
          amount: 5,
          reason: 'x'.repeat(5 * 1024 * 1024),
        }),
      },
      /too large/,
    ],
    [
      'arguments nested 300 deep',
      {
        tool: 'issue_refund',
        arguments: `{"order_id":"O-5512","amount":5,"note":${'{"a":'.repeat(300)}1${'}'.repeat(300)}}`,
      },
      /nesting deeper than 256/,
    ],
    [
      'an amount of 1e400',
      { tool: 'issue_refund', arguments: '{"order_id":"O-5512","amount":1e400}' },
      /Infinity/,
    ],
  ])(
    '%s is refused alone; the lookup beside it runs; nothing is UNRESOLVED, no case is opened',
    async (_, bad, why) => {
      tg = createEmbeddedStore();
      await tg.start();
      const outcome = await tg.client.runTurn(turn([lookup, bad]), {
        principal: desk,
        taskId: `embedded-big-${++task}`,
        step: 1,
      });

      expect(outcome.results.map((r) => r.outcome)).toEqual(['SUCCESS', 'SCHEMA_INVALID']);
      expect(outcome.results[1]!.error).toMatchObject({ code: 'SCHEMA_INVALID', retryable: true });
      expect(outcome.results[1]!.error!.message).toMatch(why);
      expect(outcome.calls[1]!.published).toBeUndefined();
      expect(tg.downstreams.faults.orders.received()).toBeGreaterThanOrEqual(1);
      expect(tg.downstreams.faults.payments.received()).toBe(0);
      await tg.awaitAudited([outcome.calls[0]!.published!.callId]);
      expect(await tg.caseStore.list({})).toEqual([]);
    },
    30_000,
  );
});

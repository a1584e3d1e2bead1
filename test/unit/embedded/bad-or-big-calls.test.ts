import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../libs/core/types.js';
import type { ProviderTurn } from '../../../services/sdk/index.js';
import { DEMO_PRINCIPALS } from '../../../services/demo/principals.js';
import { openAIToolCallMessage } from '../../helpers/tool-calls.js';
import { embeddedStores } from './embedded-parts.js';

const desk: Principal = {
  ...DEMO_PRINCIPALS.supportDesk,
  scopes: ['orders:read', 'refunds:write', 'inventory:write'],
};

const started = embeddedStores();

let task = 0;

/** One OpenAI turn calling the given tools with the given raw argument texts. */
function turn(calls: ReadonlyArray<{ tool: string; arguments: string }>): ProviderTurn {
  return {
    provider: 'openai',
    response: openAIToolCallMessage(
      calls.map((c, i) => ({ id: `call_big_${i}`, name: c.tool, arguments: c.arguments })),
    ),
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
      const tg = await started();
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

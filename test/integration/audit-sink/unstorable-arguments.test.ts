import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { createAuditSink, type AuditSink } from '../../../services/audit-sink/audit-sink.js';
import { uniqueName } from '../../helpers/names.js';
import { createExecutorStack, type ExecutorStack } from '../executor/executor-stack.js';
import { testCatalog } from '../executor/test-parts.js';
import { busWiring, eventually } from './event-stack.js';

/** A tool whose allow-listed `labels` accepts any JSON, so deep values reach its audited arguments. */
function labelTool(invocations: string[]): ToolDefinition {
  return defineTool({
    name: 'label_ticket',
    version: '1.0.0',
    description: 'Attach labels to one support ticket. Not for closing tickets.',
    input: z.object({ ticket: z.string(), labels: z.unknown() }),
    output: z.object({ ticket: z.string() }),
    scopes: ['ledger:write'],
    owner: 'support-team',
    stateChanging: false,
    auditFields: ['ticket', 'labels'],
    execute: async (args) => {
      invocations.push(args.ticket);
      return { ticket: args.ticket };
    },
  }) as unknown as ToolDefinition;
}

function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('every attempt has exactly one audit record, whatever its arguments look like', () => {
  let stack: ExecutorStack;
  let store: PostgresAuditStore;
  let sink: AuditSink;
  const invocations: string[] = [];

  beforeAll(async () => {
    stack = await createExecutorStack('audit_unstorable');
    await migrate(stack.db.pool);
    store = new PostgresAuditStore(stack.db.pool);
    sink = createAuditSink({
      ...busWiring(stack),
      store,
      logger: silentLogger,
      groupId: uniqueName('audit_unstorable_sink'),
      producerId: 'audit-sink-test',
      partitionsConcurrently: 1,
      backoff: { baseDelayMs: 20, maxDelayMs: 200 },
    });
    await sink.start();
    const registry = new ToolRegistry();
    registry.register(labelTool(invocations));
    await stack.executor({ catalog: testCatalog(registry, 'audit-unstorable') }).start();
  });

  afterAll(async () => {
    await sink.stop();
    await stack.close();
  });

  it('deeply nested allow-listed arguments: one audit_records row per attempt, saying they were omitted; the chain verifies', async () => {
    const deepCall = (ticket: string, labels: string, index: number) =>
      stack.request(
        {},
        {
          tool: 'label_ticket',
          index,
          resourceKey: `t1:ticket:${ticket}`,
          argumentsJson: `{"ticket":"${ticket}","labels":${labels}}`,
          // The SDK computes no key for such arguments; a raw producer may send any.
          idempotencyKey: `tg1:${'0'.repeat(63)}${index}`,
        },
      );
    const requests = [
      await deepCall('T-300', nested(300), 1), // deeper than the canonical-JSON (audit store) limit
      await deepCall('T-20000', nested(20_000), 2), // too deep even for JSON.stringify
      await stack.request(
        { ticket: 'T-ok', labels: ['vip'] },
        { tool: 'label_ticket', index: 3, resourceKey: 't1:ticket:T-ok' },
      ),
    ];
    await stack.publishCalls(requests);
    const results = await stack.read('results', 3);
    expect(new Set(results.map((r) => r.event.callId))).toEqual(new Set(requests.map((r) => r.callId)));

    const rows = await eventually('an audit row for every attempt', async () => {
      const found = await Promise.all(requests.map((r) => store.query({ callId: r.callId, limit: 10 })));
      return found.every((f) => f.length > 0) ? found : undefined;
    });
    // Give a duplicate a chance to land before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const { rows: counts } = await stack.db.pool.query<{ call_id: string; n: string }>(
      'SELECT call_id, count(*) AS n FROM audit_records WHERE call_id = ANY($1) GROUP BY call_id',
      [requests.map((r) => r.callId)],
    );
    expect(new Map(counts.map((c) => [c.call_id, Number(c.n)]))).toEqual(
      new Map(requests.map((r) => [r.callId, 1])),
    );
    for (const [i, ticket] of ['T-300', 'T-20000'].entries()) {
      const args = rows[i]![0]!.record.arguments;
      expect(JSON.stringify(args).length).toBeLessThan(2_000);
      expect(args).toEqual({
        ticket,
        labels: expect.stringMatching(/^\[omitted: .*nesting deeper than 256 at \$\.arguments\.labels\.a/),
      });
    }
    expect(rows[2]![0]!.record.arguments).toEqual({ ticket: 'T-ok', labels: ['vip'] });
    expect(invocations).toEqual(['T-ok']);
    expect(await store.verify()).toMatchObject({ ok: true, checked: 3 });
  });
});

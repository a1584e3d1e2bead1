import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AuditRecord } from '../../../libs/core/audit-record.js';
import { createPolicyEngine } from '../../../libs/policy/policy-engine.js';
import { recordedFacts, replayPolicy } from '../../../libs/policy/replay.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';

/** `replayPolicy` on hand-made audit records: what it can judge from a record, and what it must not guess. */

const refund = defineTool({
  name: 'refund',
  version: '1.0.0',
  owner: 'test',
  description: 'Refund part of an order.',
  scopes: [],
  input: z.object({ order_id: z.string(), amount: z.number(), note: z.string().optional() }),
  output: z.object({ ok: z.boolean() }),
  auditFields: ['order_id', 'amount'],
  execute: () => Promise.resolve({ ok: true }),
}) as ToolDefinition;
const registry = new ToolRegistry();
registry.register(refund);

const FACTS = [
  { name: 'refunded', tools: ['refund'], measure: { sum: 'amount' }, per: ['resourceKey'], windowMs: 60_000 },
] as const;

const candidate = (cedar: string) =>
  createPolicyEngine({ version: 'candidate', cedar, facts: FACTS }, [refund]);

const LIMIT_40 = `@id("limit") @reason("over")
forbid (principal, action == Toolgate::Action::"refund", resource)
when { principal.roles.contains("support") && context.facts.refunded.greaterThan(decimal("40.0")) };`;

let seq = 0;
function record(overrides: Partial<AuditRecord> & { refused?: boolean }): AuditRecord {
  const { refused = false, ...rest } = overrides;
  seq += 1;
  return {
    callId: `call-${seq}`,
    tool: 'refund',
    toolVersion: '1.0.0',
    principalId: 'agent-1',
    tenant: 't1',
    taskId: 'task',
    step: 0,
    index: seq,
    traceId: '0af7651916cd43dd8448eb211c80319c',
    arguments: { order_id: 'O-1', amount: 10, note: '[redacted]' },
    outcome: refused ? 'POLICY_VIOLATION' : 'SUCCESS',
    decisions: [{ stage: 'business-rules', decision: refused ? 'refuse' : 'pass', durationMs: 0.1 }],
    attempts: [],
    startedAtMs: 1_000 + seq,
    finishedAtMs: 1_001 + seq,
    policy: {
      version: 'active',
      roles: ['support'],
      facts: { refunded: '45.0000' },
      ...(refused ? { ruleId: 'old-limit' } : {}),
    },
    ...rest,
  };
}

describe('replayPolicy', () => {
  it('flips in both directions, by rule, with examples, from the recorded facts and roles', () => {
    const report = replayPolicy(
      [
        record({}), // 45 allowed then; refused at 40
        record({ policy: { version: 'active', roles: ['support'], facts: { refunded: '30.0000' } } }),
        record({
          refused: true,
          policy: {
            version: 'active',
            roles: ['support'],
            facts: { refunded: '39.0000' },
            ruleId: 'old-limit',
          },
        }),
        record({ policy: { version: 'active', roles: ['manager'], facts: { refunded: '99.0000' } } }),
      ],
      candidate(LIMIT_40),
      registry,
    );
    expect(report).toMatchObject({ records: 4, judged: 4, unchanged: 2, recordedVersions: { active: 4 } });
    expect(report.newlyRefused.map((c) => [c.ruleId, c.count])).toEqual([['limit', 1]]);
    expect(report.newlyAllowed.map((c) => [c.ruleId, c.count])).toEqual([['old-limit', 1]]);
    expect(report.newlyRefused[0]!.examples[0]).toMatchObject({
      recorded: { decision: 'allow' },
      candidate: { decision: 'refuse', ruleId: 'limit' },
      facts: { refunded: '45.0000' },
    });
  });

  it('does not guess a withheld argument a rule reads: not evaluable, named', () => {
    const readsNote = `@id("no-notes") @reason("no")
forbid (principal, action == Toolgate::Action::"refund", resource)
when { context.args has note && context.args.note == "goodwill" };`;
    const report = replayPolicy([record({})], candidate(readsNote), registry);
    expect(report.unchanged).toBe(0);
    expect(report.notEvaluable.map((c) => [c.ruleId, c.count])).toEqual([
      ['needs-withheld-argument:note', 1],
    ]);
    // A rule that does not read it judges the same record.
    expect(replayPolicy([record({})], candidate(LIMIT_40), registry).notEvaluable).toEqual([]);
  });

  it('leaves out records the rules did not judge, and reports a tool no longer in the catalog', () => {
    const beforeRules = record({ decisions: [{ stage: 'authorize', decision: 'refuse', durationMs: 0 }] });
    const gone = record({ tool: 'retired_tool' });
    const report = replayPolicy([beforeRules, gone], candidate(LIMIT_40), registry);
    expect(report).toMatchObject({ records: 2, judged: 1, unchanged: 0 });
    expect(report.notEvaluable.map((c) => c.ruleId)).toEqual(['tool-not-found']);
  });

  it('a fact the record does not hold is not evaluable rather than passed', () => {
    const report = replayPolicy(
      [record({ policy: { version: 'active', roles: ['support'] } })],
      candidate(LIMIT_40),
      registry,
    );
    expect(report.notEvaluable.map((c) => [c.ruleId, c.count])).toEqual([['limit', 1]]);
  });

  it('reads recorded fact texts back exactly', () => {
    expect(recordedFacts({ a: '99.9800', b: '-0.0005', c: '3', d: 'x', e: '1.23456' })).toEqual({
      a: 999_800,
      b: -5,
      c: 3,
    });
  });
});

import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { createExecutorStack, type ExecutorStack } from '../integration/executor/executor-stack.js';
import { ledgerRows, LEDGER_DDL, TOOL_SCOPE } from '../integration/executor/ledger-tools.js';
import {
  ADVERSARIAL_KINDS,
  buildCase,
  caseSpec,
  INJECTION,
  UNDECODABLE,
  type AdversarialCase,
} from './adversarial-cases.js';
import { chaosPipeline, type ChaosPipeline } from './chaos-pipeline.js';
import { chaosScale } from './chaos-scale.js';
import { lossyLedgerTool } from './lossy-ledger.js';
import { collectTopic } from './topic-collector.js';

/**
 * Scenario 4, adversarial input: ≥200 malformed events generated with fast-check (fixed seed),
 * published onto the calls topic of a running executor among good calls, then sentinel good calls
 * on every partition.
 *
 * Checks: no crash (the executor keeps answering), no stalled partition (every sentinel answered
 * after the batch), every bad event refused with a model-readable reason and audited when it could
 * be decoded, or dead-lettered as POISON (matched by its raw bytes or call id) when it could not;
 * nothing reached the ledger. Prompt-injection text returned by a tool travels as a JSON string
 * inside the result and decides nothing: the write it asks for, made without the scope, is refused.
 *
 * Not covered here: path traversal (the catalog has no read_document tool). Replayed and tampered
 * preview tokens have their own scenario, preview-tokens.test.ts.
 */
const SCALE = chaosScale();

const accountTool = defineTool({
  name: 'read_account',
  version: '1.0.0',
  description: 'Read one account of the caller’s tenant by id (ids look like t1-acc-7).',
  input: z.strictObject({ accountId: z.string().min(1).max(64) }),
  output: z.object({ accountId: z.string(), balance: z.number() }),
  scopes: [TOOL_SCOPE],
  owner: 'chaos',
  stateChanging: false,
  timeoutMs: 1_000,
  auditFields: ['accountId'],
  // Resource-level rule: an account belongs to the tenant its id starts with.
  authorize: (principal, args) => args.accountId.startsWith(`${principal.tenant}-`),
  execute: (args) => Promise.resolve({ accountId: args.accountId, balance: 10 }),
}) as unknown as ToolDefinition;

const noteTool = defineTool({
  name: 'read_note',
  version: '1.0.0',
  description: 'Read a customer note (free text written by anyone).',
  input: z.strictObject({ noteId: z.string().min(1).max(64) }),
  output: z.object({ noteId: z.string(), text: z.string() }),
  scopes: [TOOL_SCOPE],
  owner: 'chaos',
  stateChanging: false,
  timeoutMs: 1_000,
  auditFields: ['noteId'],
  execute: (args) => Promise.resolve({ noteId: args.noteId, text: INJECTION }),
}) as unknown as ToolDefinition;

let stack: ExecutorStack;
let built: ChaosPipeline;

beforeAll(async () => {
  stack = await createExecutorStack('chaos_adv');
  await stack.db.pool.query(LEDGER_DDL);
  built = chaosPipeline({
    redis: stack.redis.redis,
    keyPrefix: stack.redis.prefix,
    tools: [lossyLedgerTool(stack.db.pool, { workMs: 0, losePerMille: 0 }), accountTool, noteTool],
  });
});

afterAll(async () => {
  built.breakers.shutdown();
  await stack.close();
});

describe('adversarial input', () => {
  it('every malformed event refused or dead-lettered, audited, no crash, no stalled partition', async () => {
    const results = await collectTopic(stack, 'results');
    const audit = await collectTopic(stack, 'audit');
    const dlq = await collectTopic(stack, 'dlq');
    const executor = stack.executor(built);
    await executor.start();

    const template = await stack.request({ key: 'k', seq: 0, ref: 'template' });
    const specs = fc.sample(caseSpec, { numRuns: SCALE.adversarialRuns, seed: 20_261_130 });
    // Every kind at least once, whatever the sample drew.
    ADVERSARIAL_KINDS.forEach((kind, k) => specs.push({ kind, n: 7 + k, text: 'x', cut: 0.5 }));
    const cases: AdversarialCase[] = [];
    for (const [i, spec] of specs.entries()) cases.push(await buildCase(stack, spec, i, template));
    for (const c of cases) await stack.publishRaw(c.key, c.value);

    // The injection: a read returns steering text; then the write it asks for, without the scope.
    const injected = await stack.request(
      { noteId: 'n1' },
      { callId: `${stack.prefix}-note`, tool: 'read_note', resourceKey: 't1:note:n1' },
    );
    await stack.publishCalls([injected]);

    // Sentinels: a good call on every calls partition, published after the whole batch.
    const sentinels = [];
    for (let s = 0; s < 36; s++) {
      sentinels.push(
        await stack.request(
          { key: `sentinel${s}`, seq: 0, ref: `${stack.prefix}-sentinel${s}` },
          { callId: `${stack.prefix}-sentinel${s}` },
        ),
      );
    }
    await stack.publishCalls(sentinels);
    const sentinelIds = new Set(sentinels.map((s) => s.callId));
    await results.until(
      () => results.events.filter((e) => sentinelIds.has(e.callId)).length >= sentinels.length,
      120_000,
      () =>
        `the sentinels: ${results.events.filter((e) => sentinelIds.has(e.callId)).length}/${sentinels.length}`,
    );
    await results.until(
      () => results.events.some((e) => e.callId === injected.callId),
      30_000,
      () => 'the note',
    );
    // Outputs of the batch published before the sentinels' have arrived by now on their partitions;
    // give the single-partition audit and dlq topics a moment to be read to the end.
    await new Promise((r) => setTimeout(r, 1_500));
    await executor.stop();
    await results.stop();
    await audit.stop();
    await dlq.stop();

    const sentinelPartitions = new Set<number>();
    const { partitionForKey } = await import('../../libs/bus/partitioner.js');
    for (const s of sentinels) sentinelPartitions.add(partitionForKey(s.resourceKey, 6));
    const resultById = new Map(results.events.map((e) => [e.callId, e]));
    const auditIds = new Set(audit.events.map((a) => a.callId));
    // Undecodable messages' dead letters carry their bytes' SHA-256 (not the bytes themselves).
    const poisonBySha = new Map(
      dlq.events.flatMap((d) => {
        const sha = (JSON.parse(d.lastKnownStateJson ?? '{}') as { payloadSha256?: unknown }).payloadSha256;
        return typeof sha === 'string' ? [[sha, d] as const] : [];
      }),
    );
    const dlqById = new Map(dlq.events.filter((d) => d.callId !== null).map((d) => [d.callId!, d]));
    const perKind: Record<
      string,
      { n: number; refused: number; audited: number; deadLettered: number; reasons: Set<string> }
    > = {};
    const failures: string[] = [];
    for (const c of cases) {
      const k = (perKind[c.kind] ??= { n: 0, refused: 0, audited: 0, deadLettered: 0, reasons: new Set() });
      k.n += 1;
      const r = resultById.get(c.callId);
      const d = poisonBySha.get(createHash('sha256').update(c.value).digest('hex')) ?? dlqById.get(c.callId);
      if (r !== undefined && !UNDECODABLE.has(c.kind)) {
        if (r.outcome === 'SUCCESS' || !r.error?.message)
          failures.push(`${c.kind} ${c.callId}: ${r.outcome}`);
        else if (!auditIds.has(c.callId)) failures.push(`${c.kind} ${c.callId}: refusal not audited`);
        else {
          k.refused += 1;
          if (auditIds.has(c.callId)) k.audited += 1;
          k.reasons.add(r.error.code);
        }
      } else if (d !== undefined && d.errorMessage.length > 0) {
        k.deadLettered += 1;
        k.reasons.add(`${d.reason}:${d.errorCode}`);
      } else {
        failures.push(`${c.kind} ${c.callId}: neither refused nor dead-lettered`);
      }
    }
    const note = resultById.get(injected.callId)!;
    const noteText = (JSON.parse(note.payloadJson ?? 'null') as { text?: unknown } | null)?.text;
    const rows = await ledgerRows(stack.db.pool);
    const badRows = rows.filter((r) => !r.callRef.includes('-sentinel'));
    console.log(
      `[chaos adversarial] ${JSON.stringify({
        events: cases.length,
        perKind: Object.fromEntries(
          Object.entries(perKind).map(([kind, v]) => [kind, { ...v, reasons: [...v.reasons] }]),
        ),
        sentinelsAnswered: sentinels.filter((s) => resultById.get(s.callId)?.outcome === 'SUCCESS').length,
        sentinelPartitions: sentinelPartitions.size,
        dlqEvents: dlq.events.length,
        auditRecords: audit.events.length,
        ledgerRowsFromBadEvents: badRows.length,
        injectionOutcome: note.outcome,
        failures: failures.slice(0, 20),
      })}`,
    );

    expect(cases.length).toBeGreaterThanOrEqual(200);
    expect(failures).toEqual([]);
    expect(sentinelPartitions.size).toBe(6);
    for (const s of sentinels) expect(resultById.get(s.callId)?.outcome, s.callId).toBe('SUCCESS');
    expect(badRows).toEqual([]);
    // The injected text is data: a string field of the JSON result, verbatim.
    expect(note.outcome).toBe('SUCCESS');
    expect(noteText).toBe(INJECTION);
    for (const c of cases.filter((x) => x.kind === 'authz-facts-in-args' || x.kind === 'no-scope-plain')) {
      expect(resultById.get(c.callId)?.outcome, c.callId).not.toBe('SUCCESS');
    }
  });
});

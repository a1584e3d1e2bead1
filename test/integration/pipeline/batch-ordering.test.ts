import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runBatch, type BatchCall, type RunBatchOptions } from '../../../libs/batch/run-batch.js';
import { idempotencyKey } from '../../../libs/core/idempotency-key.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { context, executor, postgresBackend, toolCall, type Backend } from './store-backed-pipeline.js';

/**
 * The lost update: "remove 1 of SKU-7" ten times in one turn. The inventory tool reads the
 * stock, waits a moment (a downstream round trip), and writes stock − qty — the classic
 * read-modify-write an agent's downstream often is. Run through the full pipeline against Postgres.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const INITIAL = 100;

let schema: TestSchema;
let backend: Backend;
let pipeline: GuardPipeline;
let tool: ToolDefinition;

beforeAll(async () => {
  schema = await createTestSchema('batch');
  await schema.pool.query('CREATE TABLE inventory (sku text PRIMARY KEY, stock integer NOT NULL)');
  backend = await postgresBackend(schema);
  tool = defineTool({
    name: 'update_inventory',
    version: '1.0.0',
    description: 'Remove units of one SKU from stock. Use for confirmed shipments only.',
    input: z.object({ sku: z.string(), qty: z.number().int().positive() }),
    output: z.object({ sku: z.string(), stock: z.number() }),
    scopes: [],
    owner: 'warehouse',
    timeoutMs: 5_000,
    conflictKey: (args, ctx) => `${ctx.tenant}:inventory:${args.sku}`,
    async execute(args) {
      const { rows } = await schema.pool.query<{ stock: number }>(
        'SELECT stock FROM inventory WHERE sku = $1',
        [args.sku],
      );
      const stock = rows[0]!.stock;
      await sleep(5);
      await schema.pool.query('UPDATE inventory SET stock = $2 WHERE sku = $1', [args.sku, stock - args.qty]);
      return { sku: args.sku, stock: stock - args.qty };
    },
  }) as unknown as ToolDefinition;
  pipeline = executor(backend, [tool], 'exec-1');
});

afterAll(async () => {
  await schema.drop();
});

async function stockOf(sku: string): Promise<number> {
  const { rows } = await schema.pool.query<{ stock: number }>('SELECT stock FROM inventory WHERE sku = $1', [
    sku,
  ]);
  return rows[0]!.stock;
}

const run = (call: BatchCall['call'], ctx: BatchCall['ctx'], signal: AbortSignal) =>
  pipeline
    .run(call, ctx, { signal, idempotencyKey: idempotencyKey(ctx, call.name, call.arguments) })
    .then((r) => r.result);

/**
 * Ten "remove 1" calls of a fresh SKU (stock {@link INITIAL}) as one model turn (index 0–9, so each
 * is its own logical call), run as one batch of up to ten at once, ordered by `conflictKey`.
 */
async function tenDecrements(conflictKey: RunBatchOptions['conflictKey']) {
  const sku = uniqueName('SKU');
  await schema.pool.query('INSERT INTO inventory (sku, stock) VALUES ($1, $2)', [sku, INITIAL]);
  const taskId = uniqueName('task');
  const batch: BatchCall[] = Array.from({ length: 10 }, (_, index) => ({
    call: toolCall('update_inventory', { sku, qty: 1 }, `call-${index}`),
    ctx: context(taskId, index),
  }));
  const items = await runBatch(batch, run, {
    concurrency: 10,
    batchDeadlineMs: 30_000,
    conflictKey,
    clock: systemClock,
  });
  return { sku, items };
}

describe('same-SKU calls in one batch', () => {
  it('with the conflict key they run one at a time, in order: the final stock is right', async () => {
    const { sku, items } = await tenDecrements((call, ctx) => tool.conflictKey!(call.arguments, ctx));
    expect(items.map((i) => (i.status === 'completed' ? i.result.outcome : i.status))).toEqual(
      Array<string>(10).fill('SUCCESS'),
    );
    // Input order is execution order: each result saw the stock its predecessor left.
    expect(
      items.map((i) => (i.status === 'completed' ? (i.result.payload as { stock: number }).stock : -1)),
    ).toEqual(Array.from({ length: 10 }, (_, i) => INITIAL - 1 - i));
    expect(await stockOf(sku)).toBe(INITIAL - 10);
  });

  it('without it they all run at once and updates are lost (the hazard is real)', async () => {
    const { sku, items } = await tenDecrements(() => undefined);
    expect(items.every((i) => i.status === 'completed' && i.result.outcome === 'SUCCESS')).toBe(true);
    // Ten successful removals of one unit each, yet fewer than ten units left the stock.
    expect(await stockOf(sku)).toBeGreaterThan(INITIAL - 10);
  });
});

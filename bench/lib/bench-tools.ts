/**
 * The tools the benchmarks run. Both are state-changing with a per-principal rate limit that is
 * never exhausted, so every call takes the full guard path: resolve, input schema, authorization,
 * a Redis token-bucket take, policy, the Redis idempotency claim and completion, execution through
 * the breaker, output schema.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTool } from '../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../libs/registry/tool-registry.js';

export const NOOP_TOOL = 'bench_noop';
export const SLEEPY_TOOL = 'bench_sleepy';

const shape = {
  version: '1.0.0',
  input: z.object({ n: z.number().int() }),
  output: z.object({ n: z.number().int() }),
  scopes: [],
  owner: 'bench',
  stateChanging: true,
  retrySafety: { kind: 'forwards-key' },
  rateLimit: { capacity: 1e12, refillPerSecond: 1e12, per: ['principal'] },
  timeoutMs: 5_000,
} as const;

/** Returns its input; does nothing else. */
export const noopTool = defineTool({
  ...shape,
  name: NOOP_TOOL,
  description: 'Returns its input. Benchmark tool; does nothing.',
  execute: (args) => Promise.resolve({ n: args.n }),
}) as unknown as ToolDefinition;

/** Waits 0–5 ms (uniform), then returns its input: a stand-in for a fast downstream call. */
export const sleepyTool = defineTool({
  ...shape,
  name: SLEEPY_TOOL,
  description: 'Waits 0-5 ms, then returns its input. Benchmark tool.',
  execute: async (args) => {
    await sleep(Math.random() * 5);
    return { n: args.n };
  },
}) as unknown as ToolDefinition;

/** A registry holding both benchmark tools. */
export function benchRegistry(): ToolRegistry {
  const registry = new ToolRegistry();
  registry.register(noopTool);
  registry.register(sleepyTool);
  return registry;
}

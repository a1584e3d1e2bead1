import type { ExecutionContext, NormalizedToolCall, Principal } from '../../libs/core/types.js';

let task = 0;
/**
 * A context for `principal` in its own tenant. Each call gets a fresh task id (`task-<n>`, unique
 * within the test process) unless `overrides` pin one; step and index start at 0.
 */
export function ctxFor(principal: Principal, overrides: Partial<ExecutionContext> = {}): ExecutionContext {
  task += 1;
  return {
    principal,
    tenant: principal.tenant,
    taskId: `task-${task}`,
    step: 0,
    index: 0,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    ...overrides,
  };
}

let seq = 0;
/** A normalized call to `name`; each call gets a fresh id (`call_<n>`, unique within the test process). */
export function toolCall(name: string, args: Record<string, unknown>): NormalizedToolCall {
  seq += 1;
  return { id: `call_${seq}`, name, arguments: args };
}

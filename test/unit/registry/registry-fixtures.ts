import type { AnyToolDefinition } from '../../../libs/catalog/catalog.js';
import type { Principal } from '../../../libs/core/types.js';
import type { ToolInvocation } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';

/** A verified principal for tests; scopes and tenant vary per case. */
export function principal(tenant: string, scopes: readonly string[], id = 'u-1'): Principal {
  return { id, tenant, kind: 'user', scopes, roles: [] };
}

/** A registry holding `tools`, each for every tenant, registered in order. */
export function registryOf(...tools: readonly AnyToolDefinition[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  return registry;
}

/** A minimal invocation for calling `execute` directly (no pipeline involved). */
export function invocation(tenant: string): ToolInvocation {
  return {
    ctx: {
      principal: principal(tenant, []),
      tenant,
      taskId: 'task-1',
      step: 0,
      index: 0,
      traceId: '0'.repeat(32),
    },
    idempotencyKey: 'k'.repeat(64),
    attempt: 1,
    signal: new AbortController().signal,
    assertLive: () => undefined,
  };
}

import { systemClock } from '../../../libs/core/system-clock.js';
import type { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { memoryPipeline } from '../../helpers/memory-pipeline.js';

/**
 * A guard pipeline on the system clock offering only `tool`, with no business rules and no outbound
 * limits, so a test sees the integration itself. Breakers need 50 calls to open; results are kept 60 s.
 */
export function singleToolPipeline<I, O>(tool: ToolDefinition<I, O>, owner: string): GuardPipeline {
  const registry = new ToolRegistry();
  registry.register(tool);
  return memoryPipeline({
    clock: systemClock,
    tools: registry,
    policy: createPolicyEngine({ version: 'test' }, []),
    downstreamLimits: {},
    owner,
    breaker: { volumeThreshold: 50, resetTimeoutMs: 10_000 },
    settings: { resultTtlMs: 60_000, leaseMarginMs: 1_000 },
  }).pipeline;
}

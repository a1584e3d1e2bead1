import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolgateError } from '../../../libs/core/errors.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import { ToolDefinitionError } from '../../../libs/registry/definition-error.js';
import type { ResolveResult } from '../../../libs/registry/tool-registry.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { registryOf } from './registry-fixtures.js';
import { sampleTools } from './sample-tools.js';

function okTool(result: ResolveResult) {
  if (!result.ok) throw new Error(`expected ok, got ${result.error.code}: ${result.error.message}`);
  return result.tool;
}

function failure(result: ResolveResult): ToolgateError {
  if (result.ok) throw new Error(`expected a refusal, got ${result.tool.name}@${result.tool.version}`);
  expect(result.error).toBeInstanceOf(ToolgateError);
  return result.error;
}

function refundRegistry() {
  const s = sampleTools();
  return { registry: registryOf(s.issueRefundV1, s.issueRefundV2), ...s };
}

const t = { tenant: 't1' };

describe('ToolRegistry versions', () => {
  it('refuses to register the same name and version twice', () => {
    const { registry, issueRefundV1 } = refundRegistry();
    expect(() => registry.register(issueRefundV1)).toThrow(ToolDefinitionError);
    expect(() => registry.register(issueRefundV1)).toThrow(/1\.0\.0 is already registered/);
  });

  it('validates definitions that were not built with defineTool', () => {
    const { issueRefundV1 } = sampleTools();
    const registry = new ToolRegistry();
    expect(() => registry.register({ ...issueRefundV1, version: '1.0' })).toThrow(/MAJOR\.MINOR\.PATCH/);
    expect(() => registry.register({ ...issueRefundV1, retrySafety: { kind: 'none' } })).toThrow(
      /needs retrySafety 'forwards-key' or 'status-check'/,
    );
  });

  it('resolves the highest non-deprecated version by numeric, not string, order', () => {
    const registry = new ToolRegistry();
    const make = (version: string) =>
      defineTool({
        name: 'ping',
        version,
        description: 'Ping.',
        input: z.object({}),
        output: z.object({}),
        scopes: [],
        owner: 'sre',
        stateChanging: false,
        execute: () => Promise.resolve({}),
      });
    for (const v of ['1.9.0', '1.10.0', '1.2.3']) registry.register(make(v));
    expect(okTool(registry.resolve('ping', t)).version).toBe('1.10.0');
    registry.deprecate('ping', '1.10.0', { reason: 'Broke pagination' });
    expect(okTool(registry.resolve('ping', t)).version).toBe('1.9.0');
  });

  it('validates a pinned call with the schema of the version it was made against', () => {
    const { registry, calls } = refundRegistry();
    const v1Args = { order_id: 'O-5512', amount: 20 };
    const pinned = okTool(registry.resolve('issue_refund', { ...t, version: '1.0.0' }));
    const current = okTool(registry.resolve('issue_refund', t));
    expect(pinned.version).toBe('1.0.0');
    expect(current.version).toBe('2.0.0');
    expect(pinned.input.safeParse(v1Args).success).toBe(true);
    // v2 added a required field: the same arguments are not valid against the current version.
    expect(current.input.safeParse(v1Args).success).toBe(false);
    expect(calls).toMatchObject({ issue_refund_v1: 0, issue_refund_v2: 0 });
  });

  it('refuses an unknown version and lists the available ones', () => {
    const { registry } = refundRegistry();
    registry.deprecate('issue_refund', '1.0.0', {
      reason: 'No reason field',
      useInstead: 'issue_refund@2.0.0',
    });
    const error = failure(registry.resolve('issue_refund', { ...t, version: '3.0.0' }));
    expect(error.code).toBe('UNKNOWN_TOOL');
    expect(error.message).toBe(
      "Tool 'issue_refund' has no version '3.0.0'. Available versions: 1.0.0 (deprecated), 2.0.0.",
    );
    expect(error.retryable).toBe(true);
  });

  it('refuses a deprecated version with its reason and replacement', () => {
    const { registry, calls } = refundRegistry();
    registry.deprecate('issue_refund', '1.0.0', {
      reason: 'Refunds now need a reason code.',
      useInstead: 'issue_refund@2.0.0',
    });
    const error = failure(registry.resolve('issue_refund', { ...t, version: '1.0.0' }));
    expect(error.code).toBe('TOOL_DEPRECATED');
    expect(error.outcome).toBe('UNKNOWN_TOOL');
    expect(error.message).toBe(
      "Tool 'issue_refund' version 1.0.0 is deprecated: Refunds now need a reason code. Use 'issue_refund@2.0.0' instead.",
    );
    expect(error.suggestedFix).toBe("Call 'issue_refund@2.0.0' instead.");
    expect(calls.issue_refund_v1).toBe(0);
  });

  it('honours a deprecation declared in the definition itself', () => {
    const { issueRefundV1 } = sampleTools();
    const registry = new ToolRegistry();
    registry.register(
      defineTool({ ...issueRefundV1, deprecated: { reason: 'Retired', useInstead: 'refund_v3' } }),
    );
    const error = failure(registry.resolve('issue_refund', t));
    expect(error.code).toBe('TOOL_DEPRECATED');
    // The replacement is not registered, so it is not named to the model.
    expect(error.message).toBe("Tool 'issue_refund' version 1.0.0 is deprecated: Retired.");
  });

  it('refuses deprecate and override for a version that does not exist', () => {
    const { registry } = refundRegistry();
    expect(() => registry.deprecate('issue_refund', '9.9.9', { reason: 'x' })).toThrow(
      /9\.9\.9 is not registered/,
    );
    expect(() => registry.overrideForTenant('t1', 'nope', '1.0.0', () => Promise.resolve({}))).toThrow(
      ToolDefinitionError,
    );
  });

  it('lists every version for operations, sorted, with deprecation, tenants and overrides', () => {
    const { registry, lookupOrder } = refundRegistry();
    registry.register(lookupOrder, { tenants: ['t2', 't1'] });
    registry.deprecate('issue_refund', '1.0.0', { reason: 'Old' });
    registry.overrideForTenant('t2', 'lookup_order', '1.0.0', () => Promise.resolve({}));
    expect(registry.list()).toEqual([
      expect.objectContaining({
        name: 'issue_refund',
        version: '1.0.0',
        deprecated: { reason: 'Old' },
        overriddenFor: [],
      }),
      expect.objectContaining({
        name: 'issue_refund',
        version: '2.0.0',
        owner: 'payments-team',
        destructive: true,
      }),
      expect.objectContaining({
        name: 'lookup_order',
        tenants: ['t1', 't2'],
        overriddenFor: ['t2'],
        stateChanging: false,
      }),
    ]);
    expect(registry.list()[1]).not.toHaveProperty('deprecated');
  });
});

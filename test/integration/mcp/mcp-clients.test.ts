import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectLegacy, connectModern, type McpTestClient } from './mcp-clients.js';
import { createMcpStack, type McpStack } from './mcp-stack.js';

const SCOPES = 'mcp:tools orders:read orders:refund conformance:run';

describe('the official TypeScript MCP clients through the gateway', () => {
  let stack: McpStack;
  let token: string;
  beforeAll(async () => {
    stack = await createMcpStack('mcp_clients');
    token = await stack.issuer.token({ sub: 'user-ann', tenant: 'acme', scope: SCOPES });
  }, 60_000);
  afterAll(() => stack?.close());

  const clients: [string, (url: string, token: string) => Promise<McpTestClient>, string][] = [
    ['v2 client at 2026-07-28', connectModern, '2026-07-28'],
    ['v1 client at 2025-11-25', connectLegacy, '2025-11-25'],
  ];

  it.each(clients)(
    '%s lists exactly the caller’s tools, by name, with annotations',
    async (_n, connect, version) => {
      const client = await connect(stack.url, token);
      try {
        expect(client.protocolVersion).toBe(version);
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual([
          'failing_job',
          'get_order_status',
          'greet',
          'issue_refund',
          'protocol_error_job',
          'slow_compute',
          'test_error_handling',
          'test_simple_text',
        ]);
        const status = tools.find((t) => t.name === 'get_order_status')!;
        expect(status.annotations).toMatchObject({
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
        });
        expect(status.inputSchema).toMatchObject({
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          required: ['order_id'],
        });
        const refund = tools.find((t) => t.name === 'issue_refund')!;
        expect(refund.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true });
        expect(refund.outputSchema).toMatchObject({ type: 'object' });
      } finally {
        await client.close();
      }
    },
  );

  it.each(clients)(
    '%s calls a tool: one Kafka call, one audit record, validated structured content',
    async (_n, connect) => {
      const client = await connect(stack.url, token);
      const orderId = `O-${Math.random().toString(36).slice(2)}`;
      const before = stack.effects.of('get_order_status');
      try {
        const answer = await client.callTool('get_order_status', { order_id: orderId });
        expect(answer.isError).toBeFalsy();
        expect(answer.structuredContent).toEqual({ order_id: orderId, status: 'delivered' });
        expect(JSON.parse(answer.content[0]!.text!)).toEqual({ order_id: orderId, status: 'delivered' });
      } finally {
        await client.close();
      }
      expect(stack.effects.of('get_order_status')).toBe(before + 1);
      const calls = await stack.waitFor('calls', (c) => c.argumentsJson.includes(orderId));
      expect(calls).toHaveLength(1);
      expect(calls[0]!.tool).toBe('get_order_status');
      const audit = await stack.waitFor('audit', (a) => a.callId === calls[0]!.callId);
      expect(audit.map((a) => a.outcome)).toEqual(['SUCCESS']);
    },
  );
});

const INSPECTOR = join(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json'),
  '..',
  'build',
  'index.js',
);

/** Runs the MCP inspector CLI (a second, independent client) and parses its JSON output. */
function inspect(url: string, token: string, args: readonly string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    // The inspector reads its own version from a package.json one directory up: run it from services/.
    const cwd = fileURLToPath(new URL('../../../services/', import.meta.url));
    execFile(
      process.execPath,
      [INSPECTOR, url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args],
      { cwd, timeout: 30_000 },
      (err, stdout, stderr) => {
        if (err !== null) reject(new Error(`inspector failed: ${stderr || err.message}`));
        else resolve(JSON.parse(stdout) as unknown);
      },
    );
  });
}

describe('the MCP inspector CLI through the gateway', () => {
  let stack: McpStack;
  let token: string;
  beforeAll(async () => {
    stack = await createMcpStack('mcp_inspector');
    token = await stack.issuer.token({ sub: 'user-joe', tenant: 'acme', scope: 'mcp:tools orders:read' });
  }, 60_000);
  afterAll(() => stack?.close());

  it('lists and calls tools; the call is a Kafka message and an audit record', async () => {
    const listed = (await inspect(stack.url, token, ['--method', 'tools/list'])) as {
      tools: { name: string }[];
    };
    expect(listed.tools.map((t) => t.name)).toEqual(['get_order_status']);
    const orderId = `O-inspector-${Date.now()}`;
    const called = (await inspect(stack.url, token, [
      '--method',
      'tools/call',
      '--tool-name',
      'get_order_status',
      '--tool-arg',
      `order_id=${orderId}`,
    ])) as { structuredContent?: unknown };
    expect(called.structuredContent).toEqual({ order_id: orderId, status: 'delivered' });
    const [call] = await stack.waitFor('calls', (c) => c.argumentsJson.includes(orderId));
    expect(
      await stack.waitFor('audit', (a) => a.callId === call!.callId && a.outcome === 'SUCCESS'),
    ).toHaveLength(1);
    expect(stack.effects.of('get_order_status')).toBe(1);
  });
});

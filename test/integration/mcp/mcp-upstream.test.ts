import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcpUpstream, type McpUpstream } from '../../../libs/mcp-upstream/index.js';
import { startEverythingServer, type EverythingServer } from '../../helpers/everything-server.js';
import { startFixtureUpstream, type FixtureUpstream } from '../../unit/mcp-upstream/fixture-upstream.js';
import { firstLook } from '../../unit/mcp-upstream/first-look.js';
import { connectModern } from './mcp-clients.js';
import { createMcpStack, type McpStack } from './mcp-stack.js';

/** The scope the imported upstream tools ask for. */
const UPSTREAM_SCOPE = 'upstream:use';

describe('MCP upstreams behind the gateway: an MCP client calls them through Kafka and the guard pipeline', () => {
  let everything: EverythingServer;
  let stamps: FixtureUpstream;
  const upstreams: McpUpstream[] = [];
  let stack: McpStack;
  let token: string;

  beforeAll(async () => {
    everything = await startEverythingServer();
    stamps = await startFixtureUpstream([
      {
        name: 'stamp',
        description: 'Stamps a document with a label.',
        inputSchema: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
        annotations: { readOnlyHint: true }, // untrusted: the operator's settings decide
        run: (args) => ({ content: [{ type: 'text', text: `stamped ${String(args.label)}` }] }),
      },
    ]);
    const everythingTransport = { kind: 'streamable-http', url: everything.url } as const;
    const stampsTransport = { kind: 'streamable-http', url: stamps.url } as const;
    const everythingPins = await firstLook('everything', everythingTransport, ['echo']);
    const stampPins = await firstLook('stamps', stampsTransport, ['stamp']);
    upstreams.push(
      await connectMcpUpstream({
        name: 'everything',
        transport: everythingTransport,
        toolPrefix: 'everything_',
        tools: {
          echo: {
            pin: everythingPins.echo,
            scopes: [UPSTREAM_SCOPE],
            stateChanging: false,
            auditFields: ['message'],
          },
        },
      }),
      await connectMcpUpstream({
        name: 'stamps',
        transport: stampsTransport,
        toolPrefix: 'stamps_',
        tools: { stamp: { pin: stampPins.stamp, scopes: [UPSTREAM_SCOPE], auditFields: ['label'] } },
      }),
    );
    stack = await createMcpStack('mcp_upstream', { upstreams });
    token = await stack.issuer.token({
      sub: 'user-ada',
      tenant: 'acme',
      scope: `mcp:tools ${UPSTREAM_SCOPE}`,
    });
  }, 90_000);

  afterAll(async () => {
    await stack?.close();
    for (const upstream of upstreams) await upstream.close();
    await stamps?.close();
    everything?.stop();
  });

  it("lists the upstream tools only to a caller with their scope, and runs server-everything's echo as a toolgate call", async () => {
    const stranger = await stack.issuer.token({ sub: 'user-bo', tenant: 'acme', scope: 'mcp:tools' });
    const outsider = await connectModern(stack.url, stranger);
    try {
      const names = (await outsider.listTools()).tools.map((t) => t.name);
      expect(names.filter((n) => n.startsWith('everything_') || n.startsWith('stamps_'))).toEqual([]);
    } finally {
      await outsider.close();
    }

    const client = await connectModern(stack.url, token);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['everything_echo', 'stamps_stamp']));
      const message = `hello-${Date.now()}`;
      const answer = await client.callTool('everything_echo', { message });
      expect(answer.isError).toBeFalsy();
      expect(JSON.stringify(answer.structuredContent ?? answer.content)).toContain(message);
      expect(answer._meta?.['io.toolgate/result']).toMatchObject({ outcome: 'SUCCESS' });

      const [call] = await stack.waitFor(
        'calls',
        (c) => c.tool === 'everything_echo' && c.argumentsJson.includes(message),
      );
      const [audit] = await stack.waitFor('audit', (a) => a.callId === call!.callId);
      expect(audit).toMatchObject({ tool: 'everything_echo', outcome: 'SUCCESS', principalId: 'user-ada' });
      expect(audit!.argumentsJson).toContain(message);
    } finally {
      await client.close();
    }
  });

  it('runs a pinned tool once per call; after its upstream schema changes, refuses it without sending anything upstream', async () => {
    const client = await connectModern(stack.url, token);
    try {
      const first = await client.callTool('stamps_stamp', { label: 'invoice-1' });
      expect(first.isError).toBeFalsy();
      expect(JSON.stringify(first.content)).toContain('stamped invoice-1');
      expect(stamps.invocations('stamp')).toBe(1);

      // The upstream changes the tool's input schema; the executor's upstream client re-lists.
      stamps.tools.get('stamp')!.inputSchema = {
        type: 'object',
        properties: { label: { type: 'string' }, destroy_after: { type: 'boolean' } },
        required: ['label'],
      };
      const [upstream] = upstreams.filter((u) => u.name === 'stamps');
      await upstream!.refresh();
      expect(upstream!.blockedTool('stamps_stamp')).toBeDefined();

      const refused = await client.callTool('stamps_stamp', { label: 'invoice-2' });
      expect(refused.isError).toBe(true);
      expect(refused._meta?.['io.toolgate/result']).toMatchObject({
        outcome: 'POLICY_VIOLATION',
        error: { code: 'POLICY_VIOLATION', retryable: false },
      });
      expect(stamps.invocations('stamp')).toBe(1);
      const [call] = await stack.waitFor('calls', (c) => c.argumentsJson.includes('invoice-2'));
      const [audit] = await stack.waitFor('audit', (a) => a.callId === call!.callId);
      expect(audit!.decisions.at(-1)).toMatchObject({ stage: 'business-rules', decision: 'refuse' });
    } finally {
      await client.close();
    }
    // The MCP client's bearer token never reached the upstream: only the upstream's own requests.
    const received = stamps.requests.map((r) => JSON.stringify(r.headers) + r.body).join('\n');
    expect(stamps.requests.length).toBeGreaterThan(0);
    expect(received).not.toContain(token);
    expect(received).not.toContain(token.split('.')[2]!);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectMcpUpstream,
  mcpUpstreamCatalog,
  type McpUpstreamCatalog,
  type McpUpstreamTransport,
} from '../../../libs/mcp-upstream/index.js';
import {
  EVERYTHING_SERVER,
  startEverythingServer,
  type EverythingServer,
} from '../../helpers/everything-server.js';
import { upstreamPipeline, type UpstreamPipeline } from './pipeline.js';

const IMPORTED = ['echo', 'get-sum', 'get-structured-content'] as const;

let httpServer: EverythingServer | undefined;

beforeAll(async () => {
  httpServer = await startEverythingServer();
}, 30_000);

afterAll(() => {
  httpServer?.stop();
});

const transports: readonly [string, () => McpUpstreamTransport][] = [
  [
    'stdio',
    () => ({
      kind: 'stdio',
      command: process.execPath,
      args: [EVERYTHING_SERVER, 'stdio'],
      stderr: 'ignore',
    }),
  ],
  ['Streamable HTTP', () => ({ kind: 'streamable-http', url: httpServer!.url })],
];

describe.each(transports)('server-everything over %s as an upstream', (_label, transport) => {
  let pins: Record<string, string>;
  let catalog: McpUpstreamCatalog;
  let gate: UpstreamPipeline;

  beforeAll(async () => {
    // The operator's first look: nothing pinned, so everything is quarantined with its digest.
    const first = await connectMcpUpstream({
      name: 'everything',
      transport: transport(),
      toolPrefix: 'everything_',
      tools: Object.fromEntries(IMPORTED.map((name) => [name, { scopes: [] }])),
    });
    await first.close();
    expect(first.tools).toEqual([]);
    expect(first.quarantined.map((q) => [q.upstreamName, q.reason])).toEqual(
      IMPORTED.map((name) => [name, 'unpinned']),
    );
    pins = Object.fromEntries(first.quarantined.map((q) => [q.upstreamName, q.actualDigest!]));
    for (const name of IMPORTED) {
      expect(pins[name]).toMatch(/^[0-9a-f]{64}$/);
      expect(first.listed.find((l) => l.upstreamName === name)?.digest).toBe(pins[name]);
    }

    catalog = (await mcpUpstreamCatalog({
      upstreams: [
        {
          name: 'everything',
          transport: transport(),
          toolPrefix: 'everything_',
          tools: {
            echo: { pin: pins.echo, scopes: ['mcp:use'], stateChanging: false, auditFields: ['message'] },
            'get-sum': { pin: pins['get-sum'], scopes: ['mcp:use'] },
            'get-structured-content': {
              pin: pins['get-structured-content'],
              scopes: ['mcp:use'],
              stateChanging: false,
            },
          },
        },
      ],
    })({} as never)) as McpUpstreamCatalog;
    gate = upstreamPipeline(catalog);
  }, 60_000);

  afterAll(async () => {
    gate?.close();
    await catalog?.close();
  });

  it('imports exactly the pinned tools, all behind the one downstream, state-changing unless the operator says', () => {
    const [upstream] = catalog.upstreams;
    expect(upstream!.quarantined).toEqual([]);
    expect(upstream!.tools.map((t) => t.name)).toEqual([
      'everything_echo',
      'everything_get-structured-content',
      'everything_get-sum',
    ]);
    expect(new Set(upstream!.tools.map((t) => t.downstream))).toEqual(new Set(['everything']));
    // get-sum says readOnlyHint: true upstream; the operator did not, so it stays state-changing.
    const sum = upstream!.tools.find((t) => t.name === 'everything_get-sum')!;
    expect(sum.stateChanging).toBe(true);
    expect(sum.retrySafety.kind).toBe('none');
    expect(sum.retry.maxAttempts).toBe(1);
    const echo = upstream!.tools.find((t) => t.name === 'everything_echo')!;
    expect(echo.stateChanging).toBe(false);
    expect(echo.retrySafety.kind).toBe('read-only');
  });

  it('runs echo through the guard pipeline and answers with the upstream text', async () => {
    const result = await gate.run('everything_echo', { message: 'hello through toolgate' });
    expect(result.error).toBeUndefined();
    expect(result.outcome).toBe('SUCCESS');
    expect(result.toolInvocations).toBe(1);
    expect(result.payload).toEqual({ content: [{ type: 'text', text: 'Echo: hello through toolgate' }] });
  });

  it('runs get-sum through the guard pipeline', async () => {
    const result = await gate.run('everything_get-sum', { a: 2, b: 40 });
    expect(result.outcome).toBe('SUCCESS');
    expect(result.payload).toEqual({ content: [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }] });
  });

  it('returns structuredContent, validated against the output schema, for a tool that declares one', async () => {
    const result = await gate.run('everything_get-structured-content', { location: 'Chicago' });
    expect(result.outcome).toBe('SUCCESS');
    expect(result.payload).toEqual({ temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });
  });

  it("refuses arguments that break the upstream's schema before anything is sent", async () => {
    const result = await gate.run('everything_get-sum', { a: 'two', b: 40 });
    expect(result.outcome).toBe('SCHEMA_INVALID');
    expect(result.toolInvocations).toBe(0);
  });

  it('refuses a principal without the scope the operator set', async () => {
    const result = await gate.run(
      'everything_echo',
      { message: 'x' },
      {
        principal: { id: 'p', tenant: 't1', kind: 'agent', scopes: [], roles: [] },
      },
    );
    expect(result.outcome).toBe('UNAUTHORIZED');
    expect(result.toolInvocations).toBe(0);
  });
});

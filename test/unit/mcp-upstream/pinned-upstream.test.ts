import { generateKeyPair } from 'jose';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPrincipalVerifier, signPrincipal } from '../../../libs/auth/index.js';
import { defineCatalog } from '../../../libs/catalog/catalog.js';
import { STAGES } from '../../../libs/guards/stages.js';
import { Secret } from '../../../libs/integrations/secret.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import {
  connectMcpUpstream,
  mcpUpstreamCatalog,
  type McpUpstream,
  type McpUpstreamCatalog,
  type McpUpstreamToolSettings,
} from '../../../libs/mcp-upstream/index.js';
import { startFixtureUpstream, type FixtureTool, type FixtureUpstream } from './fixture-upstream.js';
import { principal, upstreamPipeline, type UpstreamPipeline } from './pipeline.js';

const text = (t: string) => ({ content: [{ type: 'text', text: t }] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The fixture's tools; each test gets fresh copies, so schema edits do not leak between tests. */
function fixtureTools(): FixtureTool[] {
  const object = (properties: Record<string, unknown>, required: string[]) => ({
    type: 'object',
    properties,
    required,
  });
  return [
    {
      name: 'lookup_order',
      description: 'Look up an order by id.',
      inputSchema: object({ order_id: { type: 'string' } }, ['order_id']),
      run: (args) => text(`order ${String(args.order_id)}: shipped`),
    },
    {
      name: 'update_record',
      description: 'Set a field of a record.',
      inputSchema: object({ id: { type: 'string' }, value: { type: 'string' } }, ['id', 'value']),
      // The upstream claims this is read-only; the operator does not say so.
      annotations: { readOnlyHint: true, idempotentHint: true },
      run: (args) => text(`record ${String(args.id)} updated`),
    },
    {
      name: 'close_order',
      description: 'Close an order.',
      inputSchema: object({ order_id: { type: 'string' } }, ['order_id']),
      run: () => ({
        content: [{ type: 'text', text: 'Order O-1 is already closed; pick an open order.' }],
        isError: true,
      }),
    },
    {
      name: 'slow_write',
      description: 'A write that takes its time.',
      inputSchema: object({ id: { type: 'string' } }, ['id']),
      annotations: { readOnlyHint: true },
      run: async () => {
        await sleep(600);
        return text('written');
      },
    },
    {
      name: 'slow_read',
      description: 'A read that takes its time.',
      inputSchema: object({ id: { type: 'string' } }, ['id']),
      run: async () => {
        await sleep(600);
        return text('read');
      },
    },
    {
      name: 'totals',
      description: 'Order totals.',
      inputSchema: object({}, []),
      outputSchema: object({ total: { type: 'number' } }, ['total']),
      run: () => ({ content: [], structuredContent: { total: 'not a number' } }),
    },
    {
      name: 'explode',
      description: 'Fails inside the server.',
      inputSchema: object({}, []),
      run: () => {
        throw new Error('database connection lost');
      },
    },
    {
      name: 'wrong_pin',
      description: 'Pinned to a digest that is not its own.',
      inputSchema: object({}, []),
      run: () => text('should never run'),
    },
    {
      name: 'no_pin',
      description: 'Named by the operator but never pinned.',
      inputSchema: object({}, []),
      run: () => text('should never run'),
    },
    {
      name: 'conditional',
      description: 'An input schema zod cannot express.',
      inputSchema: { type: 'object', properties: { a: { if: { type: 'string' }, then: { minLength: 2 } } } },
      run: () => text('should never run'),
    },
  ];
}

/** The operator's settings; `pins` come from the first listing. */
function settings(pins: Record<string, string>): Record<string, McpUpstreamToolSettings> {
  const pinned = (name: string, extra: Partial<McpUpstreamToolSettings> = {}): McpUpstreamToolSettings => ({
    pin: pins[name],
    scopes: ['mcp:use'],
    ...extra,
  });
  return {
    lookup_order: pinned('lookup_order', { stateChanging: false, retry: { maxAttempts: 1 } }),
    update_record: pinned('update_record', { auditFields: ['id'] }),
    close_order: pinned('close_order'),
    slow_write: pinned('slow_write', { timeoutMs: 200 }),
    slow_read: pinned('slow_read', { timeoutMs: 200, stateChanging: false, retry: { maxAttempts: 2 } }),
    totals: pinned('totals', { stateChanging: false }),
    explode: pinned('explode'),
    wrong_pin: { pin: 'a'.repeat(64), scopes: [] },
    no_pin: { scopes: [] },
    conditional: pinned('conditional'),
    not_listed: { pin: 'b'.repeat(64), scopes: [] },
  };
}

const CALLER_DELEGATION_REF = 'caller-delegation-ref-7f3a91';
const CALLER_ID = 'caller-principal-zq81';
const UPSTREAM_TOKEN = 'upstream-own-token-55';

let fixture: FixtureUpstream;
let pins: Record<string, string>;
let catalog: McpUpstreamCatalog;
let upstream: McpUpstream;
let gate: UpstreamPipeline;
/** Index of the first request the catalog's client sent (earlier ones are the operator's listing). */
let catalogRequestsFrom: number;

async function openCatalog(): Promise<McpUpstreamCatalog> {
  return (await mcpUpstreamCatalog({
    upstreams: [
      {
        name: 'fixture',
        transport: { kind: 'streamable-http', url: fixture.url, bearerToken: new Secret(UPSTREAM_TOKEN) },
        tools: settings(pins),
      },
    ],
    onQuarantine: () => undefined,
  })({} as never)) as McpUpstreamCatalog;
}

beforeEach(async () => {
  fixture = await startFixtureUpstream(fixtureTools());
  // The operator's first listing: connect naming no tools, read every tool's digest.
  const first = await connectMcpUpstream({
    name: 'fixture',
    transport: { kind: 'streamable-http', url: fixture.url },
    tools: {},
  });
  pins = Object.fromEntries(first.listed.map((l) => [l.upstreamName, l.digest]));
  await first.close();
  catalogRequestsFrom = fixture.requests.length;
  catalog = await openCatalog();
  upstream = catalog.upstreams[0]!;
  gate = upstreamPipeline(catalog);
});

afterEach(async () => {
  gate.close();
  await catalog.close();
  await fixture.close();
});

/** Changes a fixture tool's input schema, as an upstream deploy would. */
function changeInputSchema(name: string): void {
  const tool = fixture.tools.get(name)!;
  tool.inputSchema = {
    ...tool.inputSchema,
    properties: { ...(tool.inputSchema.properties as object), force: { type: 'boolean' } },
  };
}

describe('pinning: only the schema the operator accepted is imported', () => {
  it('quarantines a wrong pin, a missing pin, an unlisted tool and an inexpressible schema, with both digests', () => {
    expect(upstream.tools.map((t) => t.name)).toEqual([
      'close_order',
      'explode',
      'lookup_order',
      'slow_read',
      'slow_write',
      'totals',
      'update_record',
    ]);
    const byName = Object.fromEntries(upstream.quarantined.map((q) => [q.upstreamName, q]));
    expect(Object.keys(byName).sort()).toEqual(['conditional', 'no_pin', 'not_listed', 'wrong_pin']);
    expect(byName.wrong_pin).toMatchObject({
      reason: 'digest-mismatch',
      expectedDigest: 'a'.repeat(64),
      actualDigest: pins.wrong_pin,
    });
    expect(byName.no_pin).toMatchObject({ reason: 'unpinned', actualDigest: pins.no_pin });
    expect(byName.no_pin!.expectedDigest).toBeUndefined();
    expect(byName.not_listed).toMatchObject({ reason: 'missing', expectedDigest: 'b'.repeat(64) });
    expect(byName.not_listed!.actualDigest).toBeUndefined();
    expect(byName.conditional).toMatchObject({
      reason: 'schema-unsupported',
      actualDigest: pins.conditional,
    });
    expect(byName.conditional!.detail).toMatch(/input schema/);
  });

  it('a quarantined tool is not in the catalog: calling it is UNKNOWN_TOOL and the upstream never hears of it', async () => {
    const result = await gate.run('wrong_pin', {});
    expect(result.outcome).toBe('UNKNOWN_TOOL');
    expect(fixture.invocations('wrong_pin')).toBe(0);
  });

  it('requireAllTools refuses to start while any named tool is quarantined, naming the digests', async () => {
    const factory = mcpUpstreamCatalog({
      upstreams: [
        { name: 'fixture', transport: { kind: 'streamable-http', url: fixture.url }, tools: settings(pins) },
      ],
      requireAllTools: true,
      onQuarantine: () => undefined,
    });
    await expect(factory({} as never)).rejects.toThrow(new RegExp(`wrong_pin.*actual ${pins.wrong_pin}`));
  });
});

describe('a schema change on the running upstream', () => {
  it('after refresh(), calls to the changed tool are refused before anything is sent; others keep running', async () => {
    expect((await gate.run('update_record', { id: 'r1', value: 'v' })).outcome).toBe('SUCCESS');
    expect(fixture.invocations('update_record')).toBe(1);

    changeInputSchema('update_record');
    const refreshed = await upstream.refresh();
    const changed = refreshed.blocked.find((b) => b.upstreamName === 'update_record');
    expect(changed).toMatchObject({ reason: 'digest-mismatch', expectedDigest: pins.update_record });
    expect(changed!.actualDigest).not.toBe(pins.update_record);
    expect(refreshed.listed.find((l) => l.upstreamName === 'update_record')!.digest).toBe(
      changed!.actualDigest,
    );

    const refused = await gate.run('update_record', { id: 'r1', value: 'v2' });
    expect(refused.outcome).toBe('POLICY_VIOLATION');
    expect(refused.error).toMatchObject({ code: 'POLICY_VIOLATION', retryable: false });
    expect(refused.error!.message).toMatch(/was not run/);
    expect(refused.toolInvocations).toBe(0);
    expect(fixture.invocations('update_record')).toBe(1);

    expect((await gate.run('lookup_order', { order_id: 'O-1' })).outcome).toBe('SUCCESS');

    // The operator's other choice: the upstream is rolled back; the pinned schema runs again.
    fixture.tools.set(
      'update_record',
      fixtureTools().find((t) => t.name === 'update_record')!,
    );
    expect((await upstream.refresh()).blocked).toEqual([]);
    expect((await gate.run('update_record', { id: 'r1', value: 'v3' })).outcome).toBe('SUCCESS');
    expect(fixture.invocations('update_record')).toBe(2);
  });

  it("the tool itself refuses too, when the catalog's rule is not in front of it (a change found mid-call)", async () => {
    changeInputSchema('update_record');
    await upstream.refresh();
    // A pipeline whose business rules know nothing of pins: execute is the last line.
    const bare = upstreamPipeline(defineCatalog({ tools: upstream.tools }));
    try {
      const refused = await bare.run('update_record', { id: 'r1', value: 'v' });
      expect(refused.outcome).toBe('POLICY_VIOLATION');
      expect(refused.error!.message).toMatch(/was not run/);
      expect(fixture.invocations('update_record')).toBe(0);
      expect(fixture.requests.some((r) => r.body.includes('"tools/call"'))).toBe(false);
    } finally {
      bare.close();
    }
  });

  it('a tool the upstream stops listing is blocked as missing', async () => {
    fixture.tools.delete('lookup_order');
    const refreshed = await upstream.refresh();
    expect(refreshed.blocked).toEqual([
      expect.objectContaining({
        upstreamName: 'lookup_order',
        reason: 'missing',
        expectedDigest: pins.lookup_order,
      }),
    ]);
    expect((await gate.run('lookup_order', { order_id: 'O-1' })).outcome).toBe('POLICY_VIOLATION');
  });

  it("the upstream's notifications/tools/list_changed runs the refresh by itself", async () => {
    changeInputSchema('update_record');
    fixture.notifyToolsChanged();
    const deadline = Date.now() + 10_000;
    while (upstream.blockedTool('update_record') === undefined && Date.now() < deadline) await sleep(50);
    expect(upstream.blockedTool('update_record')).toMatchObject({ reason: 'digest-mismatch' });
    expect((await gate.run('update_record', { id: 'r1', value: 'v' })).outcome).toBe('POLICY_VIOLATION');
    expect(fixture.invocations('update_record')).toBe(0);
  });
});

describe('what the upstream says about itself decides nothing', () => {
  it('readOnlyHint: true on a tool the operator did not mark read-only leaves it state-changing', () => {
    const tool = upstream.tools.find((t) => t.name === 'update_record')!;
    expect(tool.stateChanging).toBe(true);
    expect(tool.retrySafety.kind).toBe('none');
    expect(tool.retry.maxAttempts).toBe(1);
  });

  it('so a timeout after sending is UNRESOLVED and never retried', async () => {
    const result = await gate.run('slow_write', { id: 'w1' });
    expect(result.outcome).toBe('UNRESOLVED');
    expect(result.toolInvocations).toBe(1);
    await sleep(700);
    expect(fixture.invocations('slow_write')).toBe(1);
  });

  it('while a tool the operator marked read-only is retried on timeout and ends TIMEOUT', async () => {
    const result = await gate.run('slow_read', { id: 'r1' });
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error!.code).toBe('TIMEOUT');
    expect(result.toolInvocations).toBe(2);
  });
});

describe("the caller's credentials stay with toolgate", () => {
  let sign: (assertionFor: ReturnType<typeof principal>) => Promise<string>;
  let verifier: ReturnType<typeof createPrincipalVerifier>;

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    verifier = createPrincipalVerifier({
      keys: { k1: publicKey },
      issuer: 'https://agents.test',
      audience: 'tg',
    });
    sign = (p) =>
      signPrincipal(p, privateKey, {
        issuer: 'https://agents.test',
        audience: 'tg',
        ttlSeconds: 60,
        kid: 'k1',
      });
  });

  it("no request to the upstream carries the caller's assertion, id or delegation; only the upstream's own token", async () => {
    const caller = principal({ id: CALLER_ID, delegationRef: CALLER_DELEGATION_REF });
    const assertion = await sign(caller);
    const signedGate = upstreamPipeline(catalog);
    const pipeline = new GuardPipeline({ ...signedGate.deps, verifier }, STAGES);
    try {
      const before = fixture.requests.length;
      const { result } = await pipeline.run(
        { id: 'call_signed', name: 'update_record', arguments: {} },
        {
          principal: caller,
          tenant: caller.tenant,
          taskId: 'task-signed',
          step: 0,
          index: 0,
          traceId: '0af7651916cd43dd8448eb211c80319c',
        },
        {
          signed: { principalAssertion: assertion, argumentsJson: JSON.stringify({ id: 'r9', value: 'x' }) },
        },
      );
      expect(result.outcome).toBe('SUCCESS');
      expect(fixture.invocations('update_record')).toBe(1);
      const sent = fixture.requests.slice(before);
      expect(sent.some((r) => r.body.includes('"tools/call"'))).toBe(true);
      for (const request of fixture.requests) {
        const everything = JSON.stringify(request.headers) + request.body;
        for (const secret of [assertion, CALLER_ID, CALLER_DELEGATION_REF, assertion.split('.')[1]!]) {
          expect(everything).not.toContain(secret);
        }
      }
      const catalogRequests = fixture.requests.slice(catalogRequestsFrom);
      expect(catalogRequests.length).toBeGreaterThan(0);
      for (const request of catalogRequests) {
        expect(request.headers.authorization).toBe(`Bearer ${UPSTREAM_TOKEN}`);
      }
    } finally {
      signedGate.close();
    }
  });
});

describe("the upstream's answers", () => {
  it('an isError result comes back as an error the model can read, from the tool itself', async () => {
    const result = await gate.run('close_order', { order_id: 'O-1' });
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error).toMatchObject({ code: 'CALLER_ERROR', retryable: true });
    expect(result.error!.message).toContain('Order O-1 is already closed; pick an open order.');
    expect(result.toolInvocations).toBe(1);
    expect(fixture.invocations('close_order')).toBe(1);
    // Not a downstream failure: the breaker is not counting it.
    expect(gate.breakers.state('fixture')).toBe('closed');
  });

  it('structuredContent that breaks the declared output schema is BAD_OUTPUT, never shown', async () => {
    const result = await gate.run('totals', {});
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error!.code).toBe('BAD_OUTPUT');
    expect(result.payload).toBeUndefined();
  });

  it('a JSON-RPC internal error on a state-changing tool leaves the outcome unknown: UNRESOLVED', async () => {
    const result = await gate.run('explode', {});
    expect(result.outcome).toBe('UNRESOLVED');
    expect(fixture.invocations('explode')).toBe(1);
    expect(JSON.stringify(result)).not.toContain('database connection lost');
  });
});

describe('one upstream, one breaker', () => {
  it('failures of one tool open the breaker for every tool of the upstream; the others are not sent', async () => {
    const tight = upstreamPipeline(catalog, { volumeThreshold: 2 });
    try {
      expect(new Set(upstream.tools.map((t) => t.downstream))).toEqual(new Set(['fixture']));
      fixture.failWithStatus = 503;
      for (let i = 0; i < 2; i++) {
        const failed = await tight.run('lookup_order', { order_id: `O-${i}` });
        expect(failed.outcome).toBe('EXECUTION_ERROR');
        expect(failed.error!.code).toBe('SERVER_ERROR');
      }
      fixture.failWithStatus = undefined;
      expect(tight.breakers.state('fixture')).toBe('open');
      const posts = fixture.requests.filter((r) => r.method === 'POST').length;
      const other = await tight.run('update_record', { id: 'r1', value: 'v' });
      expect(other.outcome).toBe('EXECUTION_ERROR');
      expect(other.error!.code).toBe('BREAKER_OPEN');
      expect(fixture.invocations('update_record')).toBe(0);
      expect(fixture.requests.filter((r) => r.method === 'POST').length).toBe(posts);
    } finally {
      tight.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanForSecrets, type SecretFinding } from '../../helpers/secrets-scan.js';
import { connectLegacy, connectModern } from './mcp-clients.js';
import { createMcpStack, type McpStack } from './mcp-stack.js';

const USER_SCOPES = 'mcp:tools orders:read';

/** A 2025-style initialize POST with `token` (or none): enough to reach the bearer check. */
function initialize(url: string, token?: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
}

describe('the gateway as an OAuth resource server', () => {
  let stack: McpStack;
  let metadataUrl: string;
  beforeAll(async () => {
    stack = await createMcpStack('mcp_auth');
    metadataUrl = new URL('/.well-known/oauth-protected-resource/mcp', stack.url).href;
  }, 60_000);
  afterAll(() => stack?.close());

  it('serves protected-resource metadata naming this resource and its authorization server', async () => {
    const response = await fetch(metadataUrl);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      resource: stack.url,
      authorization_servers: [stack.issuer.issuer],
      scopes_supported: ['mcp:tools'],
      bearer_methods_supported: ['header'],
    });
  });

  it('answers 401 with a challenge pointing at the metadata when the token is missing', async () => {
    const response = await initialize(stack.url);
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(`resource_metadata="${metadataUrl}"`);
  });

  it.each([
    ['a token for another audience', { aud: 'https://other.example/mcp' }, 'not issued for this resource'],
    ['an expired token', { expiresIn: -120 }, 'expired'],
  ])('answers 401 invalid_token for %s', async (_name, claims, says) => {
    const token = await stack.issuer.token({
      sub: 'user-bob',
      tenant: 'acme',
      scope: USER_SCOPES,
      ...claims,
    });
    const response = await initialize(stack.url, token);
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate')!;
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(says);
    expect(challenge).not.toContain(token);
  });

  it('answers 401 invalid_token for a token signed by a key the issuer does not publish', async () => {
    const token = await stack.issuer.token(
      { sub: 'user-bob', tenant: 'acme', scope: USER_SCOPES },
      { signWithStrangerKey: true },
    );
    const response = await initialize(stack.url, token);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('answers 403 insufficient_scope naming the scope when the token lacks mcp:tools', async () => {
    const token = await stack.issuer.token({ sub: 'user-bob', tenant: 'acme', scope: 'orders:read' });
    const response = await initialize(stack.url, token);
    expect(response.status).toBe(403);
    const challenge = response.headers.get('www-authenticate')!;
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="mcp:tools"');
    expect(stack.records.some((r) => r.outcome === 'forbidden' && r.reason === 'insufficient_scope')).toBe(
      true,
    );
  });

  it('hides a tool the caller may not call and refuses it by name without publishing it', async () => {
    const userToken = await stack.issuer.token({ sub: 'user-cat', tenant: 'acme', scope: USER_SCOPES });
    const adminToken = await stack.issuer.token({
      sub: 'admin-dan',
      tenant: 'acme',
      scope: 'mcp:tools orders:read admin:purge',
    });
    const admin = await connectModern(stack.url, adminToken);
    const user = await connectModern(stack.url, userToken);
    try {
      expect((await admin.listTools()).tools.map((t) => t.name)).toContain('purge_tenant');
      expect((await user.listTools()).tools.map((t) => t.name)).toEqual(['get_order_status']);
      const refused = await user.callTool('purge_tenant', { confirm: true });
      expect(refused.isError).toBe(true);
      expect(JSON.parse(refused.content[0]!.text!)).toMatchObject({ error: { code: 'UNKNOWN_TOOL' } });
      // A call published after the refusal: once it is on the topic, the refused one would be too.
      const marker = `O-after-refusal-${Date.now()}`;
      expect((await user.callTool('get_order_status', { order_id: marker })).isError).toBeFalsy();
      await stack.waitFor('calls', (c) => c.argumentsJson.includes(marker));
      expect((await stack.waitFor('calls', () => true)).filter((c) => c.tool === 'purge_tenant')).toEqual([]);
      expect(stack.effects.of('purge_tenant')).toBe(0);
    } finally {
      await Promise.all([admin.close(), user.close()]);
    }
  });

  it('lets the token travel nowhere: not to Kafka, the logs or the request records', async () => {
    const token = await stack.issuer.token({ sub: 'user-eve', tenant: 'acme', scope: USER_SCOPES });
    const marker = `O-leak-check-${Date.now()}`;
    for (const connect of [connectModern, connectLegacy]) {
      const client = await connect(stack.url, token);
      try {
        expect(
          (await client.callTool('get_order_status', { order_id: `${marker}-${connect.name}` })).isError,
        ).toBeFalsy();
      } finally {
        await client.close();
      }
    }
    const calls = await stack.waitFor('calls', (c) => c.argumentsJson.includes(marker), 2);
    await stack.waitFor('results', (r) => calls.some((c) => c.callId === r.callId), 2);
    await stack.waitFor('audit', (a) => calls.some((c) => c.callId === a.callId), 2);
    const findings: SecretFinding[] = [];
    for (const kind of ['calls', 'results', 'audit'] as const) {
      scanForSecrets(kind, Buffer.concat([...stack.raw(kind)]).toString('latin1'), { token }, findings);
    }
    scanForSecrets('gateway log', stack.logs.join('\n'), { token }, findings);
    scanForSecrets('request records', JSON.stringify(stack.records), { token }, findings);
    expect(findings).toEqual([]);
    // The token's signature alone must not travel either (a token is header.payload.signature).
    const signature = token.split('.')[2]!;
    expect(Buffer.concat([...stack.raw('calls')]).toString('latin1')).not.toContain(signature);
  });

  it('records every MCP request with the client name and protocol revision', async () => {
    const token = await stack.issuer.token({ sub: 'user-fay', tenant: 'acme', scope: USER_SCOPES });
    const client = await connectModern(stack.url, token);
    try {
      await client.callTool('get_order_status', { order_id: 'O-record' });
    } finally {
      await client.close();
    }
    expect(stack.records).toContainEqual(
      expect.objectContaining({
        method: 'tools/call',
        outcome: 'tool-success',
        protocolVersion: '2026-07-28',
        clientName: 'toolgate-test-modern',
        principalId: 'user-fay',
        tool: 'get_order_status',
        toolOutcome: 'SUCCESS',
      }),
    );
    expect(stack.records.some((r) => r.outcome === 'unauthenticated')).toBe(true);
  });
});

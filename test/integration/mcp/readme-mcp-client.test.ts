import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_COMMANDS } from '../../../services/cli/serve.js';
import { loadMcpGatewayConfig } from '../../../services/mcp-gateway/config.js';
import { createMcpStack, type McpStack } from './mcp-stack.js';

const README = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');
const SECTION = (() => {
  const start = README.indexOf('\n## Use toolgate from any MCP client\n');
  if (start < 0) throw new Error('README.md has no "Use toolgate from any MCP client" section');
  return README.slice(start, README.indexOf('\n## ', start + 1));
})();
const block = (lang: string): string => {
  const found = new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(SECTION);
  if (found === null) throw new Error(`the section has no ${lang} block`);
  return found[1]!;
};

interface ClientConfig {
  readonly mcpServers: Record<string, { type: string; url: string; headers: Record<string, string> }>;
}

describe('README "Use toolgate from any MCP client"', () => {
  let stack: McpStack;
  beforeAll(async () => {
    stack = await createMcpStack('mcp_readme');
  }, 60_000);
  afterAll(() => stack?.close());

  it('its environment is a complete gateway configuration, and its command is a toolgate command', () => {
    const lines = block('bash').trim().split('\n');
    const exports = lines.filter((l) => l.startsWith('export '));
    const env: Record<string, string> = {};
    for (const line of exports) {
      const [key, value] = line.slice('export '.length).split(/=(.*)/s) as [string, string];
      env[key] = value;
    }
    // The two files it names, as a user creates them.
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-readme-mcp-'));
    const files: Record<string, Buffer | string> = {
      MCP_CONFIRMATION_SECRET_FILE: randomBytes(32),
      PRINCIPAL_SIGNING_KEY_FILE: generateKeyPairSync('ed25519')
        .privateKey.export({ format: 'pem', type: 'pkcs8' })
        .toString(),
    };
    for (const [name, content] of Object.entries(files)) {
      expect(env[name], name).toBeDefined();
      const path = join(dir, env[name]!);
      writeFileSync(path, content);
      env[name] = path;
    }
    const config = loadMcpGatewayConfig(env);
    const client = (JSON.parse(block('json')) as ClientConfig).mcpServers.toolgate!;
    expect(config.resourceUrl).toBe(client.url);
    const command = lines.at(-1)!.split(' ');
    expect(command.slice(0, 3)).toEqual(['npx', 'toolgate', 'mcp-gateway']);
    expect(SERVICE_COMMANDS['mcp-gateway']?.catalogModule).toBeDefined();
    expect(command[3]).toBe('--catalog');
  });

  it('its client configuration connects, lists and calls tools (the URL moved to the test’s port)', async () => {
    const server = (JSON.parse(block('json')) as ClientConfig).mcpServers.toolgate!;
    expect(server.type).toBe('http');
    const token = await stack.issuer.token({
      sub: 'user-kim',
      tenant: 'acme',
      scope: 'mcp:tools orders:read',
    });
    const url = new URL(server.url);
    url.port = new URL(stack.url).port;
    const headers = Object.fromEntries(
      Object.entries(server.headers).map(([k, v]) => [k, v.replace('${TOOLGATE_MCP_TOKEN}', token)]),
    );
    const client = new Client({ name: 'readme-config', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['get_order_status']);
      const answer = await client.callTool({ name: 'get_order_status', arguments: { order_id: 'O-readme' } });
      expect(answer.structuredContent).toEqual({ order_id: 'O-readme', status: 'delivered' });
    } finally {
      await client.close();
    }
  });
});

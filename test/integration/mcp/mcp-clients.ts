import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** The calls the tests make, common to both official TypeScript clients. */
export interface McpTestClient {
  readonly protocolVersion: string | undefined;
  listTools(): Promise<{
    tools: {
      name: string;
      annotations?: Record<string, unknown>;
      inputSchema: unknown;
      outputSchema?: unknown;
    }[];
  }>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    meta?: Record<string, unknown>,
  ): Promise<CallToolAnswer>;
  close(): Promise<void>;
}

export interface CallToolAnswer {
  readonly content: { type: string; text?: string }[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
  readonly _meta?: Record<string, unknown>;
}

const auth = (token: string): RequestInit => ({ headers: { Authorization: `Bearer ${token}` } });

/** The v2 client (`@modelcontextprotocol/client`) pinned to 2026-07-28: no session, `server/discover`. */
export async function connectModern(url: string, token: string): Promise<McpTestClient> {
  const client = new ModernClient(
    { name: 'toolgate-test-modern', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new ModernTransport(new URL(url), { requestInit: auth(token) }));
  return {
    protocolVersion: client.getNegotiatedProtocolVersion(),
    listTools: () => client.listTools(),
    callTool: (name, args, meta) =>
      client.callTool({ name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) }) as never,
    close: () => client.close(),
  };
}

/** What the person answers, and every question they were asked (the elicitation messages). */
export interface ConfirmingClient {
  readonly client: ModernClient;
  readonly asked: string[];
}

/**
 * The v2 client pinned to 2026-07-28 with form elicitation: each confirmation question is
 * recorded in `asked` and answered with `answer` (default: accept with `confirm: true`).
 */
export async function connectConfirming(
  url: string,
  token: string,
  answer: () => { action: 'accept' | 'decline' | 'cancel'; content?: { confirm: boolean } } = () => ({
    action: 'accept',
    content: { confirm: true },
  }),
): Promise<ConfirmingClient> {
  const asked: string[] = [];
  const client = new ModernClient(
    { name: 'toolgate-test-confirming', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler('elicitation/create', (request) => {
    asked.push(request.params.message);
    return answer();
  });
  await client.connect(new ModernTransport(new URL(url), { requestInit: auth(token) }));
  return { client, asked };
}

/** The v1 client (`@modelcontextprotocol/sdk`), which speaks 2025-11-25 with the initialize handshake. */
export async function connectLegacy(url: string, token: string): Promise<McpTestClient> {
  const client = new LegacyClient({ name: 'toolgate-test-legacy', version: '1.0.0' });
  const transport = new LegacyTransport(new URL(url), { requestInit: auth(token) });
  await client.connect(transport);
  return {
    protocolVersion: transport.protocolVersion,
    listTools: () => client.listTools(),
    callTool: (name, args, meta) =>
      client.callTool({ name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) }) as never,
    close: () => client.close(),
  };
}

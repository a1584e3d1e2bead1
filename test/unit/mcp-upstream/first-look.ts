import { expect } from 'vitest';
import { connectMcpUpstream, type McpUpstreamTransport } from '../../../libs/mcp-upstream/index.js';

/**
 * The digests an operator reads on a first, unpinned connection and pins after review: connects
 * naming `tools` without pins (so every one is quarantined with its actual digest), closes, and
 * answers upstream tool name → digest.
 */
export async function firstLook(
  name: string,
  transport: McpUpstreamTransport,
  tools: readonly string[],
): Promise<Record<string, string>> {
  const look = await connectMcpUpstream({
    name,
    transport,
    tools: Object.fromEntries(tools.map((t) => [t, { scopes: [] }])),
  });
  await look.close();
  expect(look.tools).toEqual([]);
  return Object.fromEntries(look.quarantined.map((q) => [q.upstreamName, q.actualDigest!]));
}

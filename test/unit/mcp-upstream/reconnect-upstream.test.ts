import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  mcpUpstreamCatalog,
  type McpUpstreamCatalog,
  type McpUpstreamTransport,
} from '../../../libs/mcp-upstream/index.js';
import { firstLook } from './first-look.js';
import { upstreamPipeline, type UpstreamPipeline } from './pipeline.js';

const SERVER = fileURLToPath(new URL('../../fixtures/mcp/stdio-upstream.ts', import.meta.url));

const transport = (): McpUpstreamTransport => ({
  kind: 'stdio',
  command: process.execPath,
  args: ['--import', 'tsx', SERVER],
  stderr: 'ignore',
});

describe('an upstream whose stdio process ends', () => {
  let catalog: McpUpstreamCatalog;
  let gate: UpstreamPipeline;

  beforeAll(async () => {
    const pins = await firstLook('crashy', transport(), ['whoami', 'exit_now']);
    catalog = (await mcpUpstreamCatalog({
      upstreams: [
        {
          name: 'crashy',
          transport: transport(),
          tools: {
            whoami: { pin: pins.whoami, scopes: ['mcp:use'], stateChanging: false },
            exit_now: { pin: pins.exit_now, scopes: ['mcp:use'] },
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

  const pid = async (): Promise<number> => {
    const result = await gate.run('whoami', {});
    expect(result.outcome, JSON.stringify(result.error)).toBe('SUCCESS');
    return (result.payload as { pid: number }).pid;
  };

  it('is started again for the next call, never re-sending the call that broke, three times over', async () => {
    const seen = [await pid()];
    for (let round = 0; round < 3; round++) {
      // The connection breaks after the request was sent: a state-changing call stays unknown.
      const broken = await gate.run('exit_now', {});
      expect(broken.outcome).toBe('UNRESOLVED');
      expect(broken.toolInvocations).toBe(1);
      // The next call reconnects (a new process) and runs.
      const next = await pid();
      expect(seen).not.toContain(next);
      seen.push(next);
      expect(await pid()).toBe(next);
    }
    expect(catalog.upstreams[0]!.blocked()).toEqual([]);
  }, 60_000);

  it('calls waiting together share one reconnection', async () => {
    await gate.run('exit_now', {});
    const pids = await Promise.all(Array.from({ length: 5 }, () => pid()));
    expect(new Set(pids).size).toBe(1);
  }, 30_000);
});

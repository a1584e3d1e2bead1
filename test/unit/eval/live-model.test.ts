import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { liveModel } from '../../../services/eval/live-model.js';
import { toolSpecs } from '../../../services/eval/schema-variants.js';

/** A loopback stand-in for a provider API: records each request body, answers with `reply`. */
async function fakeApi(reply: unknown): Promise<{ url: string; bodies: unknown[]; server: Server }> {
  const bodies: unknown[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      bodies.push({ path: req.url, body: JSON.parse(text) as unknown });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bodies, server };
}

let open: Server | undefined;
afterEach(async () => {
  if (open !== undefined) await new Promise((resolve) => open!.close(resolve));
  open = undefined;
});

describe('liveModel (against a loopback stand-in for the provider API)', () => {
  it('openai: sends the variant tools and reads the first function call', async () => {
    const api = await fakeApi({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'c1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Boston"}' },
              },
            ],
          },
        },
      ],
    });
    open = api.server;
    const ask = await liveModel({ provider: 'openai', model: 'm', apiKey: 'k', baseURL: `${api.url}/v1` });
    const answer = await ask('r08', 'Weather in Boston?', toolSpecs('bare'));
    expect(answer).toEqual({ id: 'r08', tool: 'get_weather', args: { city: 'Boston' } });
    const sent = api.bodies[0] as { path: string; body: { tools: { function: Record<string, unknown> }[] } };
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body.tools).toHaveLength(6);
    expect(sent.body.tools[0]!.function).not.toHaveProperty('description');
  });

  it('anthropic: reads a tool_use block, or the text when the model calls nothing', async () => {
    const api = await fakeApi({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
      content: [{ type: 'text', text: 'Which order?' }],
    });
    open = api.server;
    const ask = await liveModel({ provider: 'anthropic', model: 'm', apiKey: 'k', baseURL: api.url });
    const answer = await ask('r24', 'Is it raining in Berlin?', toolSpecs('described'));
    expect(answer).toEqual({ id: 'r24', tool: null, text: 'Which order?' });
    const sent = api.bodies[0] as { path: string; body: { tools: { description?: string }[] } };
    expect(sent.path).toBe('/v1/messages');
    expect(sent.body.tools.every((t) => typeof t.description === 'string')).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { EXIT } from '../../../services/cli/cli-error.js';
import { cli } from './capture.js';
import { smallCatalog } from './small-catalog.js';

/** An object schema, as far as these tests read it. */
interface JsonObject {
  readonly type?: string;
  readonly additionalProperties?: unknown;
  readonly required: string[];
  readonly properties: Record<string, unknown>;
}

interface OpenAITool {
  type: string;
  function: { name: string; description: string; parameters: JsonObject; strict: boolean };
}
interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonObject;
}

const run = (argv: string[]) => cli(['registry', 'export', ...argv], { catalog: smallCatalog() });

describe('registry export', () => {
  it('OpenAI strict: every current, non-deprecated, unrestricted tool, sorted, in the strict subset', async () => {
    const r = await run(['--format', 'openai', '--strict']);
    expect(r.code).toBe(EXIT.ok);
    const tools = r.json<OpenAITool[]>();
    expect(tools.map((t) => t.function.name)).toEqual(['issue_refund', 'lookup_order']);
    const refund = tools[0]!.function;
    expect(refund.description).toBe('Refund part of an order (v1.0.0).');
    expect(refund.strict).toBe(true);
    const lookup = tools[1]!.function.parameters;
    expect(lookup.additionalProperties).toBe(false);
    // Strict mode lists every property as required and makes the optional one nullable.
    expect([...lookup.required].sort()).toEqual(['orderId', 'verbose']);
    expect(JSON.stringify(lookup.properties.verbose)).toContain('null');
    expect(r.stderr).toBe('exported 2 tools for openai (strict)\n');
  });

  it('OpenAI without --strict keeps optional fields optional', async () => {
    const tools = (await run(['--format', 'openai'])).json<OpenAITool[]>();
    const lookup = tools.find((t) => t.function.name === 'lookup_order')!.function;
    expect(lookup.strict).toBe(false);
    expect(lookup.parameters.required).toEqual(['orderId']);
  });

  it('Anthropic: name, description and an object input_schema', async () => {
    const r = await run(['--format', 'anthropic', '--json']);
    expect(r.code).toBe(EXIT.ok);
    const tools = r.json<AnthropicTool[]>();
    expect(tools.map((t) => t.name)).toEqual(['issue_refund', 'lookup_order']);
    expect(tools[1]!.input_schema.type).toBe('object');
    expect(Object.keys(tools[1]!.input_schema.properties)).toEqual(['orderId', 'verbose']);
  });

  it('--tenant shows that tenant its restricted version; --scopes keeps tools needing no other scope', async () => {
    const t9 = (await run(['--format', 'anthropic', '--tenant', 't9'])).json<AnthropicTool[]>();
    expect(t9.find((t) => t.name === 'issue_refund')!.description).toBe('Refund part of an order (v2.0.0).');
    const readers = (await run(['--format', 'anthropic', '--scopes', 'orders:read'])).json<AnthropicTool[]>();
    expect(readers.map((t) => t.name)).toEqual(['lookup_order']);
    const nobody = await run(['--format', 'anthropic', '--scopes', 'crm:read']);
    expect(nobody.code).toBe(EXIT.ok);
    expect(nobody.json()).toEqual([]);
    expect(nobody.stderr).toBe('exported 0 tools for anthropic: nothing is visible with these settings\n');
  });

  it('refuses --strict for Anthropic and an unknown format', async () => {
    const strict = await run(['--format', 'anthropic', '--strict']);
    expect(strict.code).toBe(EXIT.usage);
    expect(strict.stderr).toContain('--strict applies to --format openai only.');
    const format = await run(['--format', 'gemini']);
    expect(format.code).toBe(EXIT.usage);
    expect(format.stderr).toContain("--format must be one of openai, anthropic (got 'gemini').");
  });

  it('a catalog module that cannot be loaded is an operational failure naming it', async () => {
    const r = await cli([
      'registry',
      'export',
      '--format',
      'openai',
      '--catalog',
      './no/such/catalog.js',
      '--database-url',
      'postgres://u@127.0.0.1:1/x',
    ]);
    expect(r.code).toBe(EXIT.failure);
    expect(r.stderr).toContain('catalog module ./no/such/catalog.js: cannot load it:');
  });
});

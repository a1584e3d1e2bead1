import type { Principal } from '../../../libs/core/types.js';
import { toAnthropicTools } from '../../../libs/registry/export-anthropic.js';
import { toOpenAITools } from '../../../libs/registry/export-openai.js';
import type { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { EXIT, UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command.js';

/** `registry export`: the provider `tools` array for the catalog's current tools. */
export const registryExportCommand: CommandSpec = {
  path: ['registry', 'export'],
  summary: "Print the OpenAI or Anthropic tools array for the executor's catalog.",
  details: [
    'Loads the tool catalog the way the executor does (the module named by --catalog or TOOLGATE_CATALOG_MODULE, default the store catalog; it is handed a database pool) and prints, as JSON, the provider tools for the current version of each tool: those every tenant can see, or, with --tenant, those that tenant can see. --scopes keeps only tools whose scopes are all among the given ones. The output is JSON with or without --json.',
  ],
  positionals: [],
  options: {
    format: {
      type: 'string',
      choices: ['openai', 'anthropic'],
      required: true,
      description: 'Which provider’s tool format.',
    },
    strict: {
      type: 'boolean',
      description: 'OpenAI strict mode: schemas rewritten into the strict subset (openai only).',
    },
    tenant: {
      type: 'string',
      valueName: 'id',
      description: 'Export what this tenant sees (its restricted versions too).',
    },
    scopes: {
      type: 'string',
      valueName: 'a,b,…',
      description: 'Only tools whose scopes are all in this list.',
    },
    catalog: {
      type: 'string',
      valueName: 'module',
      description:
        'Catalog module exporting createStoreCatalog (path relative to the working directory, or a package).',
      defaultText: '$TOOLGATE_CATALOG_MODULE, else the store catalog',
    },
  },
  needs: ['postgres'],
  examples: [
    'toolgate registry export --format openai --strict > tools.openai.json',
    'toolgate registry export --format anthropic --tenant t1',
  ],
  async run({ args, out, resources, io }) {
    const format = args.string('format') as 'openai' | 'anthropic';
    const strict = args.flag('strict');
    if (strict && format !== 'openai') {
      throw new UsageError('--strict applies to --format openai only.', args.command);
    }
    const scopes = args
      .string('scopes')
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const catalog = await resources.catalog();
    const tools = offered(catalog.registry, args.string('tenant'), scopes);
    const exported = format === 'openai' ? toOpenAITools(tools, { strict }) : toAnthropicTools(tools);
    io.stdout.write(`${JSON.stringify(exported, null, 2)}\n`);
    out.note(
      `exported ${exported.length} tool${exported.length === 1 ? '' : 's'} for ${format}${strict ? ' (strict)' : ''}` +
        (exported.length === 0 ? ': nothing is visible with these settings' : ''),
    );
    return EXIT.ok;
  },
};

/**
 * The current version of each tool visible to `tenant` (or, without one, to every tenant: a version
 * restricted to some tenants is left out), not deprecated, sorted by name; with `scopes`, only
 * tools needing no other scope. Read through forPrincipal so the choice of version is exactly the
 * one the registry makes for a caller.
 */
function offered(registry: ToolRegistry, tenant: string | undefined, scopes: readonly string[] | undefined) {
  const all = [...new Set(registry.list().flatMap((e) => e.scopes))];
  const principal: Principal = {
    id: 'toolgate-cli',
    // Tenant ids are never empty (register refuses them), so '' sees only unrestricted versions.
    tenant: tenant ?? '',
    kind: 'service',
    scopes: scopes ?? all,
    roles: [],
  };
  return registry.forPrincipal(principal);
}

import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { defineTool } from '../registry/define-tool.js';
import { ToolDefinitionError } from '../registry/definition-error.js';
import type { RetrySafety, ToolDefinition, ToolInvocation } from '../registry/tool-definition.js';
import type { McpUpstreamToolSettings, QuarantinedTool } from './options.js';
import { toolReportedError } from './upstream-errors.js';

/** The `_meta` key under which every upstream call carries toolgate's idempotency key. */
export const IDEMPOTENCY_KEY_META = 'io.toolgate/idempotency-key';

/** Attempts a retry-safe imported tool gets when the operator does not say. */
export const DEFAULT_SAFE_ATTEMPTS = 3;

/**
 * The payload of an upstream tool that declares no output schema: its text content items, in order.
 * `omittedContentTypes` names the non-text items left out (images, audio, resources), when any were.
 */
export const TEXT_OUTPUT = z.object({
  content: z.array(z.object({ type: z.literal('text'), text: z.string() })),
  omittedContentTypes: z.array(z.string()).optional(),
});

/** What one imported tool's `execute` does: send the call upstream and read the answer. */
export type UpstreamCall = (args: Record<string, unknown>, inv: ToolInvocation) => Promise<CallToolResult>;

/** A tool definition built from an upstream listing, or why it could not be. */
export type ImportResult =
  | { readonly ok: true; readonly tool: ToolDefinition<Record<string, unknown>, unknown> }
  | { readonly ok: false; readonly quarantine: QuarantinedTool };

/** Everything {@link importTool} needs besides the listing. */
export interface ImportContext {
  readonly upstream: string;
  readonly owner: string;
  readonly name: string;
  readonly settings: McpUpstreamToolSettings;
  readonly digest: string;
  /** Sends the call; runs only after the pin check passed (see connect). */
  readonly call: UpstreamCall;
}

/**
 * Builds the toolgate definition of one pinned upstream tool (whose digest already matched):
 * the input schema is the upstream's JSON Schema converted with `z.fromJSONSchema`; the output is
 * the upstream's output schema converted the same way when it declares one (the payload is then the
 * result's `structuredContent`), otherwise {@link TEXT_OUTPUT}. Never throws: a schema zod cannot
 * express is `schema-unsupported`, a definition `defineTool` rejects is `invalid-definition`.
 */
export function importTool(listed: Tool, ctx: ImportContext): ImportResult {
  const quarantine = (reason: QuarantinedTool['reason'], detail: string): ImportResult => ({
    ok: false,
    quarantine: {
      upstreamName: listed.name,
      name: ctx.name,
      reason,
      detail,
      ...(ctx.settings.pin === undefined ? {} : { expectedDigest: ctx.settings.pin }),
      actualDigest: ctx.digest,
    },
  });
  let input: z.ZodType<Record<string, unknown>>;
  let output: z.ZodType;
  try {
    input = z.fromJSONSchema(listed.inputSchema as never) as z.ZodType<Record<string, unknown>>;
  } catch (err) {
    return quarantine('schema-unsupported', `its input schema cannot be used: ${messageOf(err)}`);
  }
  const declaresOutput = listed.outputSchema !== undefined;
  try {
    output = declaresOutput ? z.fromJSONSchema(listed.outputSchema as never) : TEXT_OUTPUT;
  } catch (err) {
    return quarantine('schema-unsupported', `its output schema cannot be used: ${messageOf(err)}`);
  }
  const s = ctx.settings;
  const stateChanging = s.stateChanging ?? true;
  const retrySafety: RetrySafety<Record<string, unknown>> = !stateChanging
    ? { kind: 'read-only' }
    : s.retry?.upstreamDeduplicates === true
      ? { kind: 'forwards-key' }
      : { kind: 'none' };
  const maxAttempts = s.retry?.maxAttempts ?? (retrySafety.kind === 'none' ? 1 : DEFAULT_SAFE_ATTEMPTS);
  try {
    const tool = defineTool<Record<string, unknown>, unknown>({
      name: ctx.name,
      version: s.version ?? '1.0.0',
      description: s.description ?? listed.description ?? '',
      input,
      output,
      scopes: s.scopes,
      owner: ctx.owner,
      stateChanging,
      destructive: s.destructive ?? false,
      retrySafety,
      retry: { maxAttempts },
      downstream: ctx.upstream,
      auditFields: s.auditFields ?? [],
      ...(s.timeoutMs === undefined ? {} : { timeoutMs: s.timeoutMs }),
      ...(s.rateLimit === undefined ? {} : { rateLimit: s.rateLimit }),
      execute: async (args, inv) => payloadOf(await ctx.call(args, inv), declaresOutput),
    });
    return { ok: true, tool };
  } catch (err) {
    const detail =
      err instanceof ToolDefinitionError
        ? err.problems.join(' ')
        : `the definition failed: ${messageOf(err)}`;
    return quarantine('invalid-definition', detail);
  }
}

/**
 * The payload of an upstream answer: a refusal the model can read for `isError` (see
 * {@link toolReportedError}); otherwise `structuredContent` for a tool with an output schema (output
 * validation then checks it against that schema — a missing one fails there as BAD_OUTPUT, since the
 * tool did run), or the text items for one without.
 */
export function payloadOf(result: CallToolResult, declaresOutput: boolean): unknown {
  const items: readonly unknown[] = Array.isArray(result.content) ? result.content : [];
  const texts: { type: 'text'; text: string }[] = [];
  const omitted: string[] = [];
  for (const item of items) {
    const { type, text } = (item ?? {}) as { type?: unknown; text?: unknown };
    if (type === 'text' && typeof text === 'string') texts.push({ type: 'text', text });
    else omitted.push(typeof type === 'string' ? type : 'unknown');
  }
  if (result.isError === true) throw toolReportedError(texts.map((t) => t.text).join('\n'));
  if (declaresOutput) return result.structuredContent;
  return omitted.length === 0 ? { content: texts } : { content: texts, omittedContentTypes: omitted };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

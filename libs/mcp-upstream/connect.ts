import {
  Client,
  StreamableHTTPClientTransport,
  type JsonSchemaValidator,
  type jsonSchemaValidator,
  type Tool,
  type Transport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { AnyToolDefinition } from '../catalog/catalog.js';
import { Secret } from '../integrations/secret.js';
import { DEFAULT_TIMEOUT_MS } from '../registry/define-tool.js';
import { isValidToolName } from '../registry/tool-name.js';
import { mcpToolDigest } from './digest.js';
import { IDEMPOTENCY_KEY_META, importTool } from './import-tool.js';
import type {
  ListedMcpTool,
  McpUpstreamOptions,
  McpUpstreamToolSettings,
  McpUpstreamTransport,
  QuarantinedTool,
} from './options.js';
import { serverError } from '../core/tool-failure.js';
import { changedToolError, connectionGone, upstreamCallFailure } from './upstream-errors.js';

/** Default time for connecting and for each `tools/list`, in ms. */
export const DEFAULT_UPSTREAM_REQUEST_TIMEOUT_MS = 30_000;

/**
 * Added to a tool's timeout to make the MCP client's own request timeout: toolgate's execute stage
 * aborts the attempt at the tool's timeout (and cancels the request upstream); the client's timer
 * is only a backstop behind it.
 */
const CLIENT_TIMEOUT_GRACE_MS = 5_000;

/** What a refresh found: the upstream's current listing, and the imported tools now refusing calls. */
export interface McpUpstreamRefresh {
  readonly listed: readonly ListedMcpTool[];
  /** Imported tools whose digest no longer matches their pin (or that the upstream stopped listing). */
  readonly blocked: readonly QuarantinedTool[];
}

/** A connected upstream MCP server and the guarded toolgate tools made from it. */
export interface McpUpstream {
  /** The upstream's name: the `downstream` of every tool in {@link McpUpstream.tools}. */
  readonly name: string;
  /**
   * The runnable tools: those named in the settings whose digest matched their pin at connect,
   * sorted by name. Register them in a catalog (or use {@link mcpUpstreamCatalog}).
   */
  readonly tools: readonly AnyToolDefinition[];
  /** Tools named in the settings that were not imported at connect, and why. */
  readonly quarantined: readonly QuarantinedTool[];
  /** Every tool the upstream listed at connect, with its digest (what an operator pins). */
  readonly listed: readonly ListedMcpTool[];
  /** Imported tools that currently refuse every call (their upstream definition changed). */
  blocked(): readonly QuarantinedTool[];
  /** The block on one imported tool (by toolgate name), or undefined when it may run. */
  blockedTool(name: string): QuarantinedTool | undefined;
  /**
   * Re-lists the upstream's tools and re-checks every imported tool against its pin: a tool whose
   * digest changed, or that is no longer listed, refuses every later call before sending anything
   * upstream; one whose digest is back to its pin runs again. Refreshes run one at a time, in call
   * order. Rejects (leaving the blocks as they were) when the upstream cannot be listed.
   */
  refresh(): Promise<McpUpstreamRefresh>;
  /** Stops polling and closes the MCP client (for stdio: ends the upstream process). Idempotent. */
  close(): Promise<void>;
}

/** The state of one imported tool: what was pinned, and whether it is blocked now. */
interface ImportedEntry {
  readonly upstreamName: string;
  readonly name: string;
  readonly pin: string;
  /** The tool as listed when it was imported: its schemas are the ones calls are checked against. */
  readonly pinned: Tool;
  blocked: QuarantinedTool | undefined;
}

/**
 * The MCP client validates nothing itself: an upstream answer is checked by toolgate's output
 * stage against the pinned output schema, so a bad answer ends as BAD_OUTPUT ("the tool ran") and
 * not as a client error that would read as "the request failed".
 */
const ACCEPT_ANY: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input: unknown) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

/**
 * Connects to an MCP server with the official client (`@modelcontextprotocol/client`, stdio or
 * Streamable HTTP), lists its tools, and returns toolgate tool definitions for the ones the
 * operator named and pinned.
 *
 * Contract:
 * - Import: a tool named in `options.tools` is imported when the upstream lists it, its digest
 *   ({@link mcpToolDigest}) equals its `pin`, its schemas convert to zod and the definition is
 *   valid; otherwise it is in `quarantined` with the reason and both digests. Unnamed tools are
 *   ignored (but appear in `listed`).
 * - Each imported tool has `downstream = options.name` (one breaker and one outbound budget for the
 *   whole upstream), `stateChanging` from the settings (default true; annotations are never read),
 *   retrySafety `read-only` for read-only tools, `forwards-key` when the operator says the upstream
 *   deduplicates on the forwarded key, `none` otherwise (never retried).
 * - A call sends `tools/call` with the validated arguments and toolgate's idempotency key in
 *   `_meta["io.toolgate/idempotency-key"]`, bounded by the attempt's abort signal. It sends nothing
 *   taken from the call's principal or context: the client only carries the transport's own
 *   configured headers and token.
 * - Answers: `isError` → CALLER_ERROR with the tool's text; `structuredContent` is the payload of a
 *   tool with an output schema, the text content of one without; failures are classified by
 *   {@link upstreamCallFailure} (a timeout after sending is "outcome unknown", so a state-changing
 *   tool ends UNRESOLVED).
 * - A lost connection (the stdio process ended, the transport closed): the next call or refresh
 *   connects again (starting the process again), re-lists and re-checks every pin before sending,
 *   one reconnection shared by the calls waiting for it; nothing is re-sent. Unreachable: the call
 *   fails SERVER_ERROR without sending, and the next one tries again.
 * - Schema changes while running: {@link McpUpstream.refresh} re-checks the pins; it also runs on
 *   the upstream's `notifications/tools/list_changed` (when the upstream advertises it) and every
 *   `refreshIntervalMs` when set. A blocked tool refuses with {@link changedToolError}
 *   (POLICY_VIOLATION) before anything is sent.
 *
 * Rejects — after closing what it opened — when the options are invalid, the connection fails or
 * the first listing fails.
 */
export async function connectMcpUpstream(options: McpUpstreamOptions): Promise<McpUpstream> {
  assertValidOptions(options);
  const upstream = options.name;
  const owner = options.owner ?? `mcp-upstream:${upstream}`;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_UPSTREAM_REQUEST_TIMEOUT_MS;
  const entries = new Map<string, ImportedEntry>();
  let closed = false;
  let onListChanged: () => void = () => undefined;

  /** The client in use; replaced when its connection was lost ({@link connected}). */
  let client: Client;
  /** Its connection is gone (the stdio process ended, the transport closed): reconnect before sending. */
  let lost = false;
  const open = async (): Promise<Client> => {
    const opened = new Client(options.clientInfo ?? { name: 'toolgate', version: '0.1.0' }, {
      versionNegotiation: { mode: options.versionNegotiation ?? 'auto' },
      jsonSchemaValidator: ACCEPT_ANY,
      inputRequired: { autoFulfill: false },
      listChanged: {
        tools: { autoRefresh: false, onChanged: () => onListChanged() },
      },
    });
    try {
      await opened.connect(createTransport(options.transport), { timeout: requestTimeoutMs });
    } catch (err) {
      await opened.close().catch(() => undefined);
      throw err;
    }
    opened.onclose = () => {
      if (opened === client && !closed) lost = true;
    };
    return opened;
  };

  try {
    client = await open();
  } catch (err) {
    throw new Error(`mcp upstream ${upstream}: cannot connect: ${messageOf(err)}`, { cause: err });
  }

  const listToolsOf = async (of: Client): Promise<Tool[]> => {
    const { tools } = await of.listTools(undefined, { timeout: requestTimeoutMs, cacheMode: 'refresh' });
    return tools;
  };

  let listing: Tool[];
  try {
    listing = await listToolsOf(client);
  } catch (err) {
    await client.close().catch(() => undefined);
    throw new Error(`mcp upstream ${upstream}: cannot list its tools: ${messageOf(err)}`, { cause: err });
  }

  const listed = listing.map((tool) => ({ upstreamName: tool.name, digest: mcpToolDigest(tool) }));
  const byName = new Map(listing.map((tool) => [tool.name, tool]));
  const tools: AnyToolDefinition[] = [];
  const quarantined: QuarantinedTool[] = [];

  for (const [upstreamName, settings] of Object.entries(options.tools)) {
    const name = settings.name ?? `${options.toolPrefix ?? ''}${upstreamName}`;
    const found = byName.get(upstreamName);
    const checked = checkPin(upstreamName, name, settings, found);
    if (!checked.ok) {
      quarantined.push(checked.quarantine);
      continue;
    }
    const entry: ImportedEntry = {
      upstreamName,
      name,
      pin: checked.digest,
      pinned: found!,
      blocked: undefined,
    };
    const timeout = (settings.timeoutMs ?? DEFAULT_TIMEOUT_MS) + CLIENT_TIMEOUT_GRACE_MS;
    const imported = importTool(found!, {
      upstream,
      owner,
      name,
      settings,
      digest: checked.digest,
      call: async (args, inv) => {
        // Checked at the last moment before sending: a refresh may have blocked the tool meanwhile.
        const block = entry.blocked;
        if (block !== undefined) throw changedToolError(entry.name, block.detail);
        let live: Client;
        try {
          live = await connected();
        } catch (err) {
          throw serverError('The upstream server could not be reached again; the call was not sent.', {
            cause: err,
          });
        }
        // A reconnection re-checks the pins: the restarted upstream may serve another definition.
        const after = entry.blocked;
        if (after !== undefined) throw changedToolError(entry.name, after.detail);
        try {
          return await live.callTool(
            { name: upstreamName, arguments: args, _meta: { [IDEMPOTENCY_KEY_META]: inv.idempotencyKey } },
            { signal: inv.signal, timeout, toolDefinition: entry.pinned },
          );
        } catch (err) {
          if (connectionGone(err) && live === client && !closed) lost = true;
          throw upstreamCallFailure(err);
        }
      },
    });
    if (!imported.ok) {
      quarantined.push(imported.quarantine);
      continue;
    }
    entries.set(name, entry);
    tools.push(imported.tool);
  }
  tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const blocked = (): QuarantinedTool[] =>
    [...entries.values()].flatMap((e) => (e.blocked === undefined ? [] : [e.blocked]));

  const recheck = (current: readonly Tool[]): McpUpstreamRefresh => {
    const now = new Map(current.map((tool) => [tool.name, tool]));
    for (const entry of entries.values()) {
      const tool = now.get(entry.upstreamName);
      const digest = tool === undefined ? undefined : mcpToolDigest(tool);
      entry.blocked =
        digest === entry.pin
          ? undefined
          : {
              upstreamName: entry.upstreamName,
              name: entry.name,
              reason: digest === undefined ? 'missing' : 'digest-mismatch',
              detail:
                digest === undefined
                  ? `upstream ${upstream} no longer lists ${entry.upstreamName}`
                  : `the definition of ${entry.upstreamName} on upstream ${upstream} changed since it was pinned`,
              expectedDigest: entry.pin,
              ...(digest === undefined ? {} : { actualDigest: digest }),
            };
    }
    return {
      listed: current.map((tool) => ({ upstreamName: tool.name, digest: mcpToolDigest(tool) })),
      blocked: blocked(),
    };
  };

  /**
   * The client to send with. After its connection was lost, a new one: the upstream is connected
   * again (for stdio, its process is started again) and every imported tool re-checked against its
   * pin before anything is sent; one reconnection at a time, shared by the calls waiting for it.
   * Nothing is re-sent: a call whose connection broke after sending stays "outcome unknown".
   * Rejects when the upstream cannot be reached; the next call tries again.
   */
  let reopening: Promise<Client> | undefined;
  const connected = (): Promise<Client> => {
    if (!lost) return Promise.resolve(client);
    reopening ??= (async () => {
      if (closed) throw new Error(`mcp upstream ${upstream}: closed`);
      const fresh = await open();
      try {
        recheck(await listToolsOf(fresh));
      } catch (err) {
        await fresh.close().catch(() => undefined);
        throw err;
      }
      const old = client;
      client = fresh;
      lost = false;
      await old.close().catch(() => undefined);
      return fresh;
    })().finally(() => {
      reopening = undefined;
    });
    return reopening;
  };

  let queue: Promise<unknown> = Promise.resolve();
  const refresh = (): Promise<McpUpstreamRefresh> => {
    const run = queue.then(async () => {
      if (closed) throw new Error(`mcp upstream ${upstream}: closed`);
      return recheck(await listToolsOf(await connected()));
    });
    queue = run.catch(() => undefined);
    return run;
  };
  const refreshInBackground = (): void => {
    if (closed) return;
    refresh().catch((err: unknown) => {
      if (closed) return;
      try {
        options.onRefreshError?.(err);
      } catch {
        // A reporting hook must not break refreshing.
      }
    });
  };
  onListChanged = refreshInBackground;

  const timer =
    options.refreshIntervalMs === undefined
      ? undefined
      : setInterval(refreshInBackground, options.refreshIntervalMs);
  timer?.unref();

  return {
    name: upstream,
    tools: Object.freeze(tools),
    quarantined: Object.freeze(quarantined),
    listed: Object.freeze(listed),
    blocked,
    blockedTool: (name) => entries.get(name)?.blocked,
    refresh,
    async close() {
      if (closed) return;
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      await client.close();
    },
  };
}

type PinCheck =
  | { readonly ok: true; readonly digest: string }
  | { readonly ok: false; readonly quarantine: QuarantinedTool };

/** Whether the listed tool may be imported under its settings' pin. */
function checkPin(
  upstreamName: string,
  name: string,
  settings: McpUpstreamToolSettings,
  found: Tool | undefined,
): PinCheck {
  const expected = settings.pin === undefined ? {} : { expectedDigest: settings.pin };
  if (found === undefined) {
    return {
      ok: false,
      quarantine: {
        upstreamName,
        name,
        reason: 'missing',
        detail: `the upstream does not list ${upstreamName}`,
        ...expected,
      },
    };
  }
  const digest = mcpToolDigest(found);
  if (settings.pin === undefined) {
    return {
      ok: false,
      quarantine: {
        upstreamName,
        name,
        reason: 'unpinned',
        detail: `${upstreamName} has no pin; review it and pin its digest to import it`,
        actualDigest: digest,
      },
    };
  }
  if (settings.pin !== digest) {
    return {
      ok: false,
      quarantine: {
        upstreamName,
        name,
        reason: 'digest-mismatch',
        detail: `the definition of ${upstreamName} differs from the pinned one; review it and pin the new digest to accept it`,
        ...expected,
        actualDigest: digest,
      },
    };
  }
  return { ok: true, digest };
}

/** The client transport for the configured upstream; only configured credentials go on it. */
function createTransport(transport: McpUpstreamTransport): Transport {
  if (transport.kind === 'stdio') {
    return new StdioClientTransport({
      command: transport.command,
      args: [...(transport.args ?? [])],
      ...(transport.env === undefined ? {} : { env: { ...transport.env } }),
      ...(transport.cwd === undefined ? {} : { cwd: transport.cwd }),
      stderr: transport.stderr ?? 'inherit',
    });
  }
  const token = transport.bearerToken;
  return new StreamableHTTPClientTransport(new URL(transport.url), {
    requestInit: { headers: { ...transport.headers } },
    ...(token === undefined
      ? {}
      : {
          authProvider: {
            token: token instanceof Secret ? () => Promise.resolve(token.reveal()) : token,
          },
        }),
  });
}

/** Configuration mistakes fail at once, naming the upstream and the field. */
function assertValidOptions(options: McpUpstreamOptions): void {
  const problems: string[] = [];
  if (typeof options.name !== 'string' || options.name.trim() === '') problems.push('name must be non-empty');
  const prefix = options.toolPrefix ?? '';
  if (prefix !== '' && !/^[a-zA-Z0-9_-]+$/.test(prefix)) {
    problems.push('toolPrefix may hold only ASCII letters, digits, "_" and "-"');
  }
  const kind = (options.transport as { kind?: unknown } | undefined)?.kind;
  if (kind !== 'stdio' && kind !== 'streamable-http') {
    problems.push("transport.kind must be 'stdio' or 'streamable-http'");
  }
  if (typeof options.tools !== 'object' || options.tools === null) problems.push('tools must be an object');
  const names = new Map<string, string>();
  for (const [upstreamName, settings] of Object.entries(options.tools ?? {})) {
    if (!Array.isArray(settings?.scopes)) problems.push(`tools.${upstreamName}.scopes must be an array`);
    const name = settings?.name ?? `${prefix}${upstreamName}`;
    if (!isValidToolName(name)) {
      problems.push(
        `tools.${upstreamName}: toolgate name '${String(name)}' must match ^[a-zA-Z0-9_-]{1,64}$`,
      );
    }
    const other = names.get(name);
    if (other !== undefined)
      problems.push(`tools.${upstreamName} and tools.${other} share the name '${name}'`);
    names.set(name, upstreamName);
  }
  if (
    options.refreshIntervalMs !== undefined &&
    !(Number.isFinite(options.refreshIntervalMs) && options.refreshIntervalMs > 0)
  ) {
    problems.push('refreshIntervalMs must be a positive number');
  }
  if (problems.length > 0) {
    throw new Error(`mcp upstream ${String(options.name)}: ${problems.join('; ')}`);
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

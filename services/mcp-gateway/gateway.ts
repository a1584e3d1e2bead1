import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { hostHeaderValidation, originValidation, toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  Server,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import type { JWTVerifyGetKey } from 'jose';
import { z } from 'zod';
import { silentBusLogger, type BusLogger } from '../../libs/bus/logger.js';
import { ToolgateError } from '../../libs/core/errors.js';
import type { Principal, ToolCallResult } from '../../libs/core/types.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import type { ToolCallResolution, ToolgateClient } from '../sdk/index.js';
import { createBearerCheck, type VerifiedToken } from './bearer-auth.js';
import { toMcpCallResult, type McpCallResult } from './call-result.js';
import { confirmationGate } from './confirm-call.js';
import type { ConfirmationSettings } from './confirmation.js';
import { clientKeyOf, logicalTaskId } from './logical-call.js';
import { outputJsonSchema, toMcpTool } from './mcp-tools.js';
import type { McpRequestObserver, McpRequestRecord, RequestOutcome } from './observer.js';
import { principalFromClaims, PrincipalMappingError, type PrincipalMapping } from './principal-mapping.js';
import { requestAuditRecord, type McpAuditPublisher } from './request-audit.js';
import { requestFacts, type RequestFacts } from './request-facts.js';
import type { McpTask } from './task-store.js';
import {
  createTaskResult,
  detailedTask,
  McpTasks,
  OUTCOME_UNKNOWN_TASK_MESSAGE,
  TASKS_EXTENSION,
  tasksNegotiated,
  type McpTaskSettings,
} from './tasks.js';
import {
  DEFAULT_CALL_DEADLINE_MS,
  runGatewayCall,
  type GatewayCall,
  type GatewayCallOutcome,
} from './tool-call.js';

/** Largest request body the gateway reads (bytes); larger ones are answered 413. */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

/** Everything one gateway serves with. */
export interface McpGatewayOptions {
  /** The tool catalog's registry: what is listed, and the metadata annotations come from. */
  readonly tools: { forPrincipal(principal: Principal): ToolDefinition[] };
  /** A started SDK client: how calls reach the executors. */
  readonly client: ToolgateClient;
  readonly auth: {
    readonly issuer: string;
    /** This endpoint's canonical URL, e.g. `https://tools.example.com/mcp` (the token audience). */
    readonly resource: string;
    readonly jwks: URL | JWTVerifyGetKey;
    /** Scopes every request needs (default `['mcp:tools']`). */
    readonly requiredScopes?: readonly string[];
    /** Authorization servers listed in the protected-resource metadata (default: the issuer). */
    readonly authorizationServers?: readonly string[];
  };
  readonly principal: PrincipalMapping;
  /** Host names (no port) the endpoint answers to: the DNS-rebinding guard. */
  readonly allowedHosts: readonly string[];
  /**
   * Signs and remembers the confirmations destructive tools need ({@link confirmationGate}); every
   * replica must share the secret and the store.
   */
  readonly confirmations: ConfirmationSettings;
  /** How long a tools/call waits for its result before answering "outcome unknown" (default 30 s). */
  readonly callTimeoutMs?: number;
  /**
   * How long after publishing a call executors may still start or run it, whether or not the gateway
   * still waits (default {@link DEFAULT_CALL_DEADLINE_MS}; never shorter than the wait): the call's
   * deadline. Not the wait, so a call answered "outcome unknown" is never refused unrun for being late.
   */
  readonly callDeadlineMs?: number;
  /**
   * Serve the tasks extension ({@link TASKS_EXTENSION}) at 2026-07-28: to a request that declares
   * it, a long-running tool ({@link ToolDefinition.longRunning}) answers with a task handle at once,
   * and any call whose result is late or unknown answers with one instead of "outcome unknown".
   * Wire the SDK client's `onResolution` to {@link McpGateway.onResolution}. Default: not served.
   */
  readonly tasks?: McpTaskSettings;
  readonly observer?: McpRequestObserver;
  /**
   * Where the audit record of every MCP request goes ({@link requestAuditRecord}), handed over after
   * the response finished — it never delays or fails the answer. Best-effort: a rejection is logged
   * (`MCP request audit record lost`) and reported to `onAuditLost`. Default: none.
   */
  readonly audit?: McpAuditPublisher;
  /** Told of each audit record `audit` rejected (e.g. to count it); must not throw. */
  readonly onAuditLost?: (err: unknown) => void;
  readonly logger?: BusLogger;
  readonly serverInfo?: { readonly name: string; readonly version: string };
}

/** A running gateway's HTTP face. */
export interface McpGateway {
  /** The Node request listener: mount it on your own server, or use {@link McpGateway.listen}. */
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** Listens on `port` of `host`; resolves once listening. */
  listen(port: number, host: string): Promise<void>;
  /** Stops listening, ends open exchanges, then waits for the audit records still being published. */
  close(): Promise<void>;
  /**
   * For the SDK client's `onResolution`: a definite result that came after the gateway stopped
   * waiting settles the call's task, if it has one. Never throws.
   */
  onResolution(resolution: ToolCallResolution): void;
}

/** What the gateway hands the per-request MCP server: who is calling, and where to report. */
interface RequestScope {
  readonly principal: Principal;
  readonly facts: RequestFacts;
  /** The request declared the tasks extension and the gateway serves it. */
  readonly tasks: boolean;
  /** Filled by the tools/call handler; read when the response is finished. */
  call?: { readonly tool: string } & GatewayCallOutcome;
  /** Set when the call was answered with a task handle (`result`: what it had by then, if anything). */
  task?: { readonly tool: string; readonly callId: string; readonly result?: GatewayCallOutcome['result'] };
  /** The task a `tasks/*` request named, once found. */
  taskId?: string;
  /** Set when the call was answered with a confirmation question. */
  askedToConfirm?: string;
  /** Set when the tools/call handler threw (the SDK answered a JSON-RPC error). */
  failed?: true;
  /** Set when a handler refused the request with a JSON-RPC error (e.g. an unknown task). */
  rejected?: true;
}

const SCOPE_KEY = 'io.toolgate/request';

/**
 * The MCP front door of toolgate: Streamable HTTP at the resource URL's path, serving 2026-07-28
 * and, to clients that ask for it, 2025-11-25 (stateless: every request stands alone, as the
 * executors' calls do).
 *
 * Contract, per request, in order:
 * 1. `/.well-known/oauth-protected-resource[<path>]` (GET) answers the RFC 9728 metadata;
 * 2. a Host or Origin not in `allowedHosts` is answered 403 (DNS rebinding);
 * 3. the bearer token is verified ({@link createBearerCheck}): 401 / 403 with `WWW-Authenticate`;
 * 4. the claims become a principal ({@link principalFromClaims}); a token without one is 401;
 * 5. the MCP SDK serves the JSON-RPC request with that principal. `tools/list` lists exactly the
 *    tools the registry offers the principal (tenant-visible, current, every scope held — the scope
 *    decision the executors' authorize stage makes), sorted by name; `tools/call` of a tool not in
 *    that list is refused as unknown without publishing anything; any other call runs through
 *    toolgate ({@link runGatewayCall}) and is answered by {@link toMcpCallResult}.
 * The token itself is verified and dropped: it is not passed to the SDK's handlers, not signed into
 * anything, not logged, not reported, not audited. The JSON body of a POST is read before the token
 * is judged (up to {@link MAX_REQUEST_BODY_BYTES}), so a refused request is reported with its method,
 * client and revision too. Every request to the endpoint — refusals included — produces one
 * {@link McpRequestRecord} for the observer when its response is finished, and, with
 * {@link McpGatewayOptions.audit}, one audit record built from it ({@link requestAuditRecord}).
 */
export function createMcpGateway(options: McpGatewayOptions): McpGateway {
  const logger = options.logger ?? silentBusLogger;
  const resource = new URL(options.auth.resource);
  const metadataPath = `/.well-known/oauth-protected-resource${resource.pathname === '/' ? '' : resource.pathname}`;
  const metadataUrl = new URL(metadataPath, resource).href;
  const requiredScopes = options.auth.requiredScopes ?? ['mcp:tools'];
  const bearer = createBearerCheck({
    issuer: options.auth.issuer,
    resource: options.auth.resource,
    jwks: options.auth.jwks,
    requiredScopes,
    metadataUrl,
  });
  const metadata = JSON.stringify({
    resource: options.auth.resource,
    authorization_servers: options.auth.authorizationServers ?? [options.auth.issuer],
    scopes_supported: requiredScopes,
    bearer_methods_supported: ['header'],
    resource_name: options.serverInfo?.name ?? 'toolgate',
  });
  const callTimeoutMs = options.callTimeoutMs ?? 30_000;
  const callDeadlineMs = options.callDeadlineMs ?? DEFAULT_CALL_DEADLINE_MS;
  const tasks = options.tasks === undefined ? undefined : new McpTasks(options.tasks);
  const validateHost = hostHeaderValidation([...options.allowedHosts]);
  const validateOrigin = originValidation([...options.allowedHosts]);

  const auditing = new Set<Promise<void>>();
  const audit = (record: McpRequestRecord): void => {
    const publish = options.audit;
    if (publish === undefined) return;
    const entry = requestAuditRecord(record, { freshCallId: randomUUID(), finishedAtMs: Date.now() });
    const pending: Promise<void> = Promise.resolve()
      .then(() => publish(entry))
      .catch((err: unknown) => {
        logger.error(
          { err, callId: entry.callId, method: record.method, tenant: entry.tenant },
          'MCP request audit record lost',
        );
        try {
          options.onAuditLost?.(err);
        } catch (hookErr) {
          logger.error({ err: hookErr }, 'onAuditLost threw');
        }
      })
      .finally(() => auditing.delete(pending));
    auditing.add(pending);
  };
  const report = (record: McpRequestRecord): void => {
    try {
      options.observer?.(record);
    } catch (err) {
      logger.error({ err }, 'the MCP request observer threw');
    }
    try {
      audit(record);
    } catch (err) {
      logger.error({ err }, 'the MCP request audit record could not be built');
    }
  };

  const handler = createMcpHandler(
    (ctx) => {
      const scope = ctx.authInfo?.extra?.[SCOPE_KEY] as RequestScope | undefined;
      if (scope === undefined) throw new Error('MCP request without a verified principal');
      return mcpServer(scope, ctx.era);
    },
    { onerror: (err) => logger.debug({ err: err.message }, 'MCP request rejected by the SDK') },
  );
  const serveMcp = toNodeHandler(handler, { maxRequestBodySize: MAX_REQUEST_BODY_BYTES });

  const mcpServer = (scope: RequestScope, era: 'legacy' | 'modern'): Server => {
    const taskKeeper = era === 'modern' ? tasks : undefined;
    const servesTasks = taskKeeper !== undefined;
    const server = new Server(
      { name: options.serverInfo?.name ?? 'toolgate', version: options.serverInfo?.version ?? '0.1.0' },
      {
        capabilities: {
          tools: { listChanged: false },
          ...(servesTasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
        },
      },
    );
    server.setRequestHandler('tools/list', () => ({
      tools: options.tools.forPrincipal(scope.principal).map(toMcpTool) as never[],
    }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name, _meta: meta } = request.params;
      const args = request.params.arguments ?? {};
      const tool = options.tools.forPrincipal(scope.principal).find((t) => t.name === name);
      if (tool?.longRunning === 'required' && (taskKeeper === undefined || !scope.tasks)) {
        throw tasksRequired(`${name} runs as a task`);
      }
      const run = async (found: ToolDefinition): Promise<CallAnswer> => {
        let confirmed: Record<string, unknown> | undefined;
        if (found.destructive) {
          const decision = await confirmationGate(options.confirmations, {
            era,
            principal: scope.principal,
            tool: found,
            args,
            holderOf: (normalized) => logicalTaskIdOrEmpty(scope.principal, found.name, normalized, meta),
            requestState: ctx.mcpReq.requestState(),
            inputResponses: ctx.mcpReq.inputResponses,
          });
          if (decision.kind === 'ask') throw new AskToConfirm(decision.result);
          if (decision.kind === 'refuse') return { result: decision.result };
          // What runs is what the person was shown: the normalized arguments they accepted.
          confirmed = decision.args;
        }
        const call: GatewayCall = {
          principal: scope.principal,
          tool: found,
          args: confirmed ?? args,
          meta,
          timeoutMs: callTimeoutMs,
          callDeadlineMs,
        };
        return (
          taskKeeper !== undefined && scope.tasks
            ? callWithTask(taskKeeper, scope, call)
            : runGatewayCall(options.client, call)
        ).catch((err: unknown) => ({ result: unavailable(name, err) }));
      };
      let outcome: CallAnswer;
      try {
        outcome = tool === undefined ? { result: unknownTool(name) } : await run(tool);
      } catch (err) {
        if (!(err instanceof AskToConfirm)) {
          scope.failed = true;
          throw err;
        }
        scope.askedToConfirm = name;
        return err.result as never;
      }
      if ('task' in outcome) {
        scope.task = {
          tool: name,
          callId: outcome.task.taskId,
          ...(outcome.result === undefined ? {} : { result: outcome.result }),
        };
        return createTaskResult(outcome.task, taskKeeper!.pollIntervalMs) as never;
      }
      const { result } = outcome;
      scope.call = { tool: name, ...outcome };
      const answer: McpCallResult = toMcpCallResult(
        result,
        tool !== undefined && outputJsonSchema(tool) !== undefined,
      );
      return answer;
    });
    if (taskKeeper !== undefined) {
      const taskOf = async (taskId: string): Promise<McpTask> => {
        if (!scope.tasks) {
          scope.rejected = true;
          throw tasksRequired('tasks/* methods');
        }
        const task = await taskKeeper.owned(taskId, scope.principal);
        if (task === undefined) {
          // Another principal's task is answered exactly as a task that does not exist.
          scope.rejected = true;
          throw new ProtocolError(-32602, `Unknown task: ${JSON.stringify(taskId)}.`);
        }
        scope.taskId = task.taskId;
        return task;
      };
      server.setRequestHandler('tasks/get', { params: TASK_PARAMS }, async ({ taskId }) =>
        detailedTask(await taskOf(taskId), taskKeeper.pollIntervalMs),
      );
      server.setRequestHandler('tasks/cancel', { params: TASK_PARAMS }, async ({ taskId }) => {
        const task = await taskOf(taskId);
        if (task.status === 'working') await taskKeeper.requestCancel(task.taskId);
        return {};
      });
      // A toolgate task never waits for input: responses name no pending request and are ignored.
      server.setRequestHandler('tasks/update', { params: TASK_PARAMS }, async ({ taskId }) => {
        await taskOf(taskId);
        return {};
      });
    }
    return server;
  };

  /**
   * Runs a call for a request that declared the tasks extension. A long-running tool is answered
   * with its task as soon as the broker took the call (the call is durable from then on, and the
   * task is stored before its handle is given out); its result settles the task when it comes, up
   * to the tasks' wait. Any other tool is awaited as usual; if its result is UNRESOLVED (late, or
   * unknown after the executor's attempt), it is answered with a task too, never "outcome unknown":
   * the reconciler's answer settles it later ({@link McpGateway.onResolution}).
   */
  const callWithTask = async (t: McpTasks, scope: RequestScope, call: GatewayCall): Promise<CallAnswer> => {
    const structured = outputJsonSchema(call.tool) !== undefined;
    const owner = {
      tenant: scope.principal.tenant,
      principalId: scope.principal.id,
      tool: call.tool.name,
      structured,
    };
    if (call.tool.longRunning === undefined) {
      const outcome = await runGatewayCall(options.client, call);
      if (outcome.result.outcome !== 'UNRESOLVED' || outcome.callId === undefined) return outcome;
      const task = await t.open({
        ...owner,
        callId: outcome.callId,
        statusMessage: OUTCOME_UNKNOWN_TASK_MESSAGE,
      });
      return { task, result: outcome.result };
    }
    let published!: (callId: string) => void;
    const callId = new Promise<string>((resolve) => (published = resolve));
    const running = runGatewayCall(options.client, { ...call, timeoutMs: t.waitMs, onPublished: published });
    const first = await Promise.race([
      callId.then((id) => ({ id })),
      running.then((outcome) => ({ outcome })),
    ]);
    // Answered without being published (arguments toolgate cannot carry): nothing to follow.
    if ('outcome' in first) return first.outcome;
    const opened = t.open({ ...owner, callId: first.id });
    running
      .then(async (outcome) => {
        await opened;
        await t.settle(first.id, outcome.result, structured);
      })
      .catch((err: unknown) => logger.error({ err, callId: first.id }, 'a task could not be settled'));
    return { task: await opened };
  };

  /** The principal of a verified token refused for want of a scope; undefined when it maps to none. */
  const refusedPrincipal = (token: VerifiedToken | undefined): Principal | undefined => {
    if (token === undefined) return undefined;
    try {
      return principalFromClaims(token.claims, token.scopes, options.principal);
    } catch (err) {
      if (err instanceof PrincipalMappingError) return undefined;
      throw err;
    }
  };

  const serve = async (req: IncomingMessage, res: ServerResponse, exchange: Exchange): Promise<void> => {
    const startedAt = Date.now();
    const path = new URL(req.url ?? '/', 'http://gateway.invalid').pathname;
    if (path === metadataPath || path === '/.well-known/oauth-protected-resource') {
      res
        .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' })
        .end(metadata);
      return;
    }
    if (path !== resource.pathname) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    const early = (
      outcome: RequestOutcome,
      reason: string,
      facts: RequestFacts = requestFacts(undefined, req.headers),
      who?: Principal,
    ): void => {
      exchange.reported = true;
      report({
        ...facts,
        ...(who === undefined ? {} : { principalId: who.id, tenant: who.tenant }),
        outcome,
        reason,
        durationMs: Date.now() - startedAt,
      });
    };
    if (!validateHost(req, res) || !validateOrigin(req, res)) {
      early('rejected', 'host_or_origin');
      return;
    }
    // The body is read alongside the token check: a refused request is reported with its facts too.
    const [check, body] = await Promise.all([
      bearer(req.headers.authorization),
      req.method === 'POST' ? readJsonBody(req) : Promise.resolve(NO_BODY),
    ]);
    const facts = requestFacts(body.ok ? body.value : undefined, req.headers);
    let principal: Principal | undefined;
    let refusal = check.ok ? undefined : check.refusal;
    if (check.ok) {
      try {
        principal = principalFromClaims(check.token.claims, check.token.scopes, options.principal);
      } catch (err) {
        if (!(err instanceof PrincipalMappingError)) throw err;
        refusal = {
          status: 401,
          error: 'invalid_token',
          description: err.message,
          wwwAuthenticate: `Bearer error="invalid_token", error_description="${err.message}", resource_metadata="${metadataUrl}"`,
        };
      }
    }
    if (principal === undefined) {
      const r = refusal!;
      res
        .writeHead(r.status, { 'content-type': 'application/json', 'www-authenticate': r.wwwAuthenticate })
        .end(JSON.stringify({ error: r.error, error_description: r.description }));
      early(
        r.status === 401 ? 'unauthenticated' : 'forbidden',
        r.error,
        facts,
        check.ok ? undefined : refusedPrincipal(check.token),
      );
      return;
    }
    if (!body.ok) {
      res
        .writeHead(body.status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: body.message } }));
      early('rejected', 'parse_error', facts, principal);
      return;
    }
    if (TASK_METHODS.has(facts.method) && isModernRevision(facts.protocolVersion)) {
      const named = req.headers['mcp-name'];
      const taskId = taskIdOf(body.value);
      if (typeof named !== 'string' || named !== taskId) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: requestIdOf(body.value),
            error: { code: -32020, message: 'Header mismatch: Mcp-Name must equal params.taskId.' },
          }),
        );
        early('rejected', 'header_mismatch', facts, principal);
        return;
      }
    }
    const scope: RequestScope = {
      principal,
      facts,
      tasks: tasks !== undefined && tasksNegotiated(body.value),
    };
    const claims = check.ok ? check.token.claims : {};
    const authInfo: AuthInfo = {
      // The SDK's type wants the token; the gateway keeps none past verification.
      token: '',
      clientId: typeof claims.client_id === 'string' ? claims.client_id : principal.id,
      scopes: [...principal.scopes],
      ...(typeof claims.exp === 'number' ? { expiresAt: claims.exp } : {}),
      extra: { [SCOPE_KEY]: scope },
    };
    exchange.reported = true;
    res.once('finish', () => {
      const call = scope.call;
      report({
        ...facts,
        principalId: principal.id,
        tenant: principal.tenant,
        outcome:
          scope.askedToConfirm !== undefined
            ? 'confirmation-required'
            : scope.task !== undefined
              ? 'task-created'
              : call !== undefined
                ? callOutcome(call.result)
                : scope.failed === true || res.statusCode >= 500
                  ? 'error'
                  : scope.rejected === true || res.statusCode >= 400 || facts.method === 'tools/call'
                    ? 'rejected'
                    : 'ok',
        ...(scope.askedToConfirm === undefined ? {} : { tool: scope.askedToConfirm }),
        ...(scope.taskId === undefined ? {} : { callId: scope.taskId }),
        ...(scope.task === undefined
          ? {}
          : {
              tool: scope.task.tool,
              callId: scope.task.callId,
              ...(scope.task.result === undefined ? {} : { toolOutcome: scope.task.result.outcome }),
              ...(scope.task.result?.idempotencyKey === undefined
                ? {}
                : { idempotencyKey: scope.task.result.idempotencyKey }),
            }),
        ...(call === undefined
          ? {}
          : {
              tool: call.tool,
              toolOutcome: call.result.outcome,
              ...(call.callId === undefined ? {} : { callId: call.callId }),
              ...(call.traceId === undefined ? {} : { traceId: call.traceId }),
              ...(call.result.idempotencyKey === undefined
                ? {}
                : { idempotencyKey: call.result.idempotencyKey }),
              ...(call.result.error === undefined ? {} : { reason: call.result.error.code }),
            }),
        durationMs: Date.now() - startedAt,
      });
    });
    (req as IncomingMessage & { auth?: AuthInfo }).auth = authInfo;
    await serveMcp(req, res, body.value);
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const startedAt = Date.now();
    const exchange: Exchange = { reported: false };
    serve(req, res, exchange).catch((err: unknown) => {
      logger.error({ err }, 'MCP request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":"internal_error"}');
      if (!exchange.reported) {
        exchange.reported = true;
        report({
          ...requestFacts(undefined, req.headers),
          outcome: 'error',
          reason: 'internal_error',
          durationMs: Date.now() - startedAt,
        });
      }
    });
  };

  let http: HttpServer | undefined;
  return {
    listener,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        http = createServer(listener);
        http.once('error', reject);
        http.listen(port, host, () => resolve());
      }),
    onResolution(resolution) {
      tasks?.onResolution(resolution, (err) =>
        logger.error({ err, callId: resolution.call.callId }, 'a task could not be settled'),
      );
    },
    async close() {
      await handler.close();
      if (http !== undefined) {
        const server = http;
        await new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
      }
      // Each is bounded by the audit publisher and never rejects.
      await Promise.all([...auditing]);
    },
  };
}

/** One request's bookkeeping: whether its record was (or, once its response finishes, will be) reported. */
interface Exchange {
  reported: boolean;
}

const NO_BODY: JsonBody = { ok: true, value: undefined };

/** What a tools/call ends with: a result, or a task handle (with the result it had by then, if any). */
type CallAnswer =
  GatewayCallOutcome | { readonly task: McpTask; readonly result?: GatewayCallOutcome['result'] };

/** The params of `tasks/get`, `tasks/update` and `tasks/cancel` the gateway reads. */
const TASK_PARAMS = z.looseObject({ taskId: z.string().min(1).max(200) });

/** The methods that name a task, whose `Mcp-Name` header must equal `params.taskId`. */
const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** A revision whose requests carry `Mcp-Method` / `Mcp-Name` headers (2026-07-28 and later). */
function isModernRevision(version: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= '2026-07-28';
}

function taskIdOf(body: unknown): unknown {
  const params = (body as { params?: { taskId?: unknown } } | undefined)?.params;
  return typeof params === 'object' && params !== null ? params.taskId : undefined;
}

function requestIdOf(body: unknown): unknown {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** The JSON-RPC error (-32021) for a request that needs the tasks extension the client did not declare. */
function tasksRequired(what: string): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    `${what}: declare the ${TASKS_EXTENSION} extension in the request's client capabilities.`,
  );
}

/** Carries an input-required answer out of the call path (it is not a tool result). */
class AskToConfirm extends Error {
  constructor(readonly result: unknown) {
    super('confirmation required');
  }
}

/** The logical call's task id; '' for arguments JSON cannot hold (the call is refused later). */
function logicalTaskIdOrEmpty(
  principal: Principal,
  tool: string,
  args: Record<string, unknown>,
  meta: unknown,
): string {
  try {
    return logicalTaskId(principal, tool, args, clientKeyOf(meta as Record<string, unknown> | undefined));
  } catch {
    return '';
  }
}

function callOutcome(result: ToolCallResult): RequestOutcome {
  switch (result.outcome) {
    case 'SUCCESS':
      return 'tool-success';
    case 'DUPLICATE':
      return 'tool-duplicate';
    case 'UNRESOLVED':
      return 'tool-unknown-outcome';
    case 'EXECUTION_ERROR':
      return 'tool-failed';
    default:
      return 'tool-refused';
  }
}

function unknownTool(name: string): ToolCallResult {
  return {
    callId: 'mcp-call',
    tool: name,
    outcome: 'UNKNOWN_TOOL',
    error: {
      code: 'UNKNOWN_TOOL',
      message: `There is no tool named ${JSON.stringify(name.slice(0, 100))} for you.`,
      retryable: false,
      suggestedFix: 'Call one of the tools tools/list returns.',
    },
    toolInvocations: 0,
  };
}

function unavailable(name: string, err: unknown): ToolCallResult {
  const retryable = err instanceof ToolgateError && err.code === 'DEPENDENCY_UNAVAILABLE';
  if (!retryable) throw err;
  return {
    callId: 'mcp-call',
    tool: name,
    outcome: 'EXECUTION_ERROR',
    error: { code: 'DEPENDENCY_UNAVAILABLE', message: err.message, retryable: true, retryAfterMs: 1000 },
    toolInvocations: 0,
  };
}

type JsonBody =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly status: 400 | 413; readonly message: string };

async function readJsonBody(req: IncomingMessage): Promise<JsonBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BODY_BYTES) return { ok: false, status: 413, message: 'Request body too large.' };
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return { ok: false, status: 400, message: 'Parse error: the body is not JSON.' };
  }
}

import type { Cluster, Redis } from 'ioredis';
import { LuaScript } from '../../libs/adapters/redis/lua-script.js';

/**
 * Where an MCP task stands. A task never becomes `cancelled`: toolgate does not interrupt a call an
 * executor may have started, so a task ends with the call's real outcome.
 * - `working`: no definite result yet (running, queued, or outcome unknown and being reconciled);
 * - `completed`: the call has a definite result (success, refusal or tool error), in `result`;
 * - `failed`: toolgate itself failed the call (an internal error), in `error`.
 */
export type McpTaskStatus = 'working' | 'completed' | 'failed';

/** A JSON-RPC error object, as a failed task carries it. */
export interface McpTaskError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** One task: a tools/call answered with a handle, whose result is fetched with `tasks/get`. */
export interface McpTask {
  /** The toolgate call id of the call the task follows. */
  readonly taskId: string;
  /** Whose task it is: only the same tenant and principal may read or cancel it. */
  readonly tenant: string;
  readonly principalId: string;
  readonly tool: string;
  readonly status: McpTaskStatus;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  /** How long the task is kept after it was created. */
  readonly ttlMs: number;
  readonly statusMessage?: string;
  /** Set exactly when `completed`: the MCP tool result. */
  readonly result?: Readonly<Record<string, unknown>>;
  /** Set exactly when `failed`. */
  readonly error?: McpTaskError;
  /** Someone asked to cancel it (toolgate records the wish; the call is not interrupted). */
  readonly cancelRequested?: true;
  /** The tool has an object output schema: its result carries `structuredContent`. */
  readonly structured?: true;
}

/** A move of a `working` task: to a terminal state, or a new status message / cancel request. */
export type McpTaskChange = { readonly atMs: number; readonly statusMessage?: string } & (
  | { readonly status: 'working'; readonly cancelRequested?: true }
  | { readonly status: 'completed'; readonly result: Readonly<Record<string, unknown>> }
  | { readonly status: 'failed'; readonly error: McpTaskError }
);

/**
 * The tasks of every gateway replica (Redis in production: the replica that answers `tasks/get` need
 * not be the one that created the task). Each method is one atomic step. Throws when the backing
 * store is unreachable.
 */
export interface McpTaskStore {
  /** Stores a new `working` task, kept for its `ttlMs`. False (nothing written) when the id exists. */
  create(task: McpTask): Promise<boolean>;
  /** The task, or undefined when there is none or it has expired. */
  get(taskId: string): Promise<McpTask | undefined>;
  /**
   * Applies `change` if the task exists and is still `working`; a terminal task never changes again
   * (the first definite outcome wins). Keeps the task's expiry. True when applied. Of two concurrent
   * changes that both leave the task working (a status message, a cancel request), the later one's
   * fields win.
   */
  change(taskId: string, change: McpTaskChange): Promise<boolean>;
}

/** Tasks in one process's memory: for tests and a single embedded gateway. */
export class MemoryMcpTaskStore implements McpTaskStore {
  private readonly tasks = new Map<string, { task: McpTask; expiresAtMs: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  create(task: McpTask): Promise<boolean> {
    if (this.live(task.taskId) !== undefined) return Promise.resolve(false);
    this.tasks.set(task.taskId, { task, expiresAtMs: this.now() + task.ttlMs });
    return Promise.resolve(true);
  }

  get(taskId: string): Promise<McpTask | undefined> {
    return Promise.resolve(this.live(taskId)?.task);
  }

  change(taskId: string, change: McpTaskChange): Promise<boolean> {
    const entry = this.live(taskId);
    if (entry === undefined || entry.task.status !== 'working') return Promise.resolve(false);
    entry.task = applyChange(entry.task, change);
    return Promise.resolve(true);
  }

  private live(taskId: string): { task: McpTask; expiresAtMs: number } | undefined {
    const entry = this.tasks.get(taskId);
    if (entry !== undefined && entry.expiresAtMs <= this.now()) {
      this.tasks.delete(taskId);
      return undefined;
    }
    return entry;
  }
}

/** `task` after `change` (the caller checked it is working). Pure. */
export function applyChange(task: McpTask, change: McpTaskChange): McpTask {
  const { result: _result, error: _error, statusMessage: _message, ...kept } = task;
  return {
    ...kept,
    status: change.status,
    updatedAtMs: change.atMs,
    ...(change.statusMessage === undefined ? {} : { statusMessage: change.statusMessage }),
    ...(change.status === 'completed' ? { result: change.result } : {}),
    ...(change.status === 'failed' ? { error: change.error } : {}),
    ...(change.status === 'working' && change.cancelRequested === true ? { cancelRequested: true } : {}),
  };
}

const CREATE = new LuaScript(
  'mcp-task-create',
  `-- KEYS[1] the task's key; ARGV[1] the task as JSON; ARGV[2] ttl ms. 1 when created, 0 when it exists.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0`,
);

const CHANGE = new LuaScript(
  'mcp-task-change',
  `-- KEYS[1] the task's key; ARGV[1] the expected status marker; ARGV[2] the task after the change.
-- Replaces the task, keeping its ttl, only while it is still working. 1 when replaced.
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if string.sub(current, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1`,
);

/** The marker every working task's JSON starts with (status is always serialized first). */
const WORKING_MARKER = '{"status":"working"';

/**
 * Tasks in Redis, shared by every gateway replica: one key per task, `<prefix>mcp-task:<taskId>`,
 * holding its JSON and expiring with the task. `create` is a `SET NX PX`; `change` a Lua
 * compare-and-set on the working state that keeps the key's ttl. Works with a Cluster (one key per
 * script).
 */
export class RedisMcpTaskStore implements McpTaskStore {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly options: { readonly keyPrefix: string },
  ) {}

  async create(task: McpTask): Promise<boolean> {
    const reply = await CREATE.run(this.redis, [this.key(task.taskId)], [serialize(task), task.ttlMs]);
    return reply === 1;
  }

  async get(taskId: string): Promise<McpTask | undefined> {
    const raw = await this.redis.get(this.key(taskId));
    return raw === null ? undefined : (JSON.parse(raw) as McpTask);
  }

  async change(taskId: string, change: McpTaskChange): Promise<boolean> {
    // Read, compute, then compare-and-set on the working marker: a concurrent terminal move wins.
    const current = await this.get(taskId);
    if (current === undefined || current.status !== 'working') return false;
    const next = applyChange(current, change);
    const reply = await CHANGE.run(this.redis, [this.key(taskId)], [WORKING_MARKER, serialize(next)]);
    return reply === 1;
  }

  private key(taskId: string): string {
    return `${this.options.keyPrefix}mcp-task:${taskId}`;
  }
}

/** JSON with `status` first, so the working marker is a prefix test. */
function serialize(task: McpTask): string {
  const { status, ...rest } = task;
  return JSON.stringify({ status, ...rest });
}

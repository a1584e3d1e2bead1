import type { ToolCallResult } from '../../libs/core/types.js';
import type { ToolCallResolution } from '../sdk/index.js';
import { toMcpCallResult } from './call-result.js';
import type { McpTask, McpTaskChange, McpTaskStore } from './task-store.js';

/** The MCP extension that lets a tools/call be answered with a task handle (`tasks/get` to poll). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** Default time a task is kept after it was created: long enough for a reconciliation to end. */
export const DEFAULT_TASK_TTL_MS = 24 * 60 * 60_000;
/** Default poll interval suggested to clients. */
export const DEFAULT_TASK_POLL_INTERVAL_MS = 1_000;
/** Default time the gateway waits on the executors for the result of a call it answered with a task. */
export const DEFAULT_TASK_WAIT_MS = 10 * 60_000;

/** What a task says while its call's outcome is unknown (never "failed": it is being reconciled). */
export const OUTCOME_UNKNOWN_TASK_MESSAGE =
  'Outcome unknown: the call was accepted and may have taken effect; toolgate is reconciling it. ' +
  'Keep polling; do not call the tool again.';

/** How the gateway keeps tasks. */
export interface McpTaskSettings {
  /** Shared by every replica (Redis in production). */
  readonly store: McpTaskStore;
  /** Default {@link DEFAULT_TASK_TTL_MS}. */
  readonly ttlMs?: number;
  /** Default {@link DEFAULT_TASK_POLL_INTERVAL_MS}. */
  readonly pollIntervalMs?: number;
  /** Default {@link DEFAULT_TASK_WAIT_MS}. */
  readonly waitMs?: number;
  /** Epoch ms; default Date.now. */
  readonly now?: () => number;
}

/** Whether a request declared the tasks extension (`_meta` client capabilities, per request). */
export function tasksNegotiated(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const params = (body as { params?: unknown }).params;
  if (typeof params !== 'object' || params === null) return false;
  const meta = (params as { _meta?: unknown })._meta;
  if (typeof meta !== 'object' || meta === null) return false;
  const capabilities = (meta as Record<string, unknown>)['io.modelcontextprotocol/clientCapabilities'];
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const extensions = (capabilities as { extensions?: unknown }).extensions;
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}

/**
 * What a call's toolgate result does to its task. Pure and total.
 * - UNRESOLVED: the task stays `working`, saying the outcome is unknown and being reconciled;
 * - EXECUTION_ERROR with code INTERNAL (toolgate or the tool failed in a way it could not classify):
 *   `failed`, with JSON-RPC error -32603 carrying toolgate's structured error as `data`;
 * - anything else — success, a repeat answered with the original result, a refusal, a tool error:
 *   `completed`, with the MCP tool result a synchronous call would have had ({@link toMcpCallResult}).
 */
export function taskChangeFor(result: ToolCallResult, structured: boolean, atMs: number): McpTaskChange {
  if (result.outcome === 'UNRESOLVED') {
    return { status: 'working', statusMessage: OUTCOME_UNKNOWN_TASK_MESSAGE, atMs };
  }
  if (result.outcome === 'EXECUTION_ERROR' && result.error?.code === 'INTERNAL') {
    return {
      status: 'failed',
      error: { code: -32603, message: result.error.message, data: { error: result.error } },
      atMs,
    };
  }
  return { status: 'completed', result: toMcpCallResult(result, structured), atMs };
}

/** The fields every task answer carries (the `Task` of the extension), times as ISO-8601. */
function taskFields(task: McpTask, pollIntervalMs: number): Record<string, unknown> {
  return {
    taskId: task.taskId,
    status: task.status,
    createdAt: new Date(task.createdAtMs).toISOString(),
    lastUpdatedAt: new Date(task.updatedAtMs).toISOString(),
    ttlMs: Math.round(task.ttlMs),
    pollIntervalMs: Math.round(pollIntervalMs),
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
  };
}

/** The `tools/call` answer that hands out a task: flat, `resultType: "task"`, no result yet. */
export function createTaskResult(task: McpTask, pollIntervalMs: number): Record<string, unknown> {
  return { resultType: 'task', ...taskFields(task, pollIntervalMs) };
}

/** The `tasks/get` answer: the task, with its result inlined once completed or its error once failed. */
export function detailedTask(task: McpTask, pollIntervalMs: number): Record<string, unknown> {
  return {
    ...taskFields(task, pollIntervalMs),
    ...(task.status === 'completed' && task.result !== undefined ? { result: task.result } : {}),
    ...(task.status === 'failed' && task.error !== undefined ? { error: task.error } : {}),
  };
}

/** Most resolutions remembered for tasks not created yet, and for how long. */
const EARLY_RESOLUTIONS = 1_000;
const EARLY_RESOLUTION_MS = 60_000;

/**
 * The gateway's tasks: opened for a published call, settled by the call's result — from the turn the
 * gateway still awaits, or, after it stopped waiting, from a resolution the SDK client passes on
 * (the reconciler's or an operator's answer on the results topic: {@link McpTasks.onResolution}).
 * A resolution can overtake the task it settles (a call answered UNRESOLVED, then resolved before
 * its task was stored): the last {@link EARLY_RESOLUTIONS} such are kept for a minute and applied
 * when the task is opened.
 */
export class McpTasks {
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  readonly waitMs: number;
  private readonly now: () => number;
  private readonly early = new Map<string, { result: ToolCallResult; atMs: number }>();

  constructor(readonly settings: McpTaskSettings) {
    this.ttlMs = settings.ttlMs ?? DEFAULT_TASK_TTL_MS;
    this.pollIntervalMs = settings.pollIntervalMs ?? DEFAULT_TASK_POLL_INTERVAL_MS;
    this.waitMs = settings.waitMs ?? DEFAULT_TASK_WAIT_MS;
    this.now = settings.now ?? Date.now;
  }

  /**
   * Stores the `working` task of a published call, then applies a result that arrived first. Resolves
   * once the task is stored: only then may its handle be given out.
   */
  async open(call: {
    readonly callId: string;
    readonly tenant: string;
    readonly principalId: string;
    readonly tool: string;
    readonly structured: boolean;
    readonly statusMessage?: string;
  }): Promise<McpTask> {
    const atMs = this.now();
    const task: McpTask = {
      status: 'working',
      taskId: call.callId,
      tenant: call.tenant,
      principalId: call.principalId,
      tool: call.tool,
      createdAtMs: atMs,
      updatedAtMs: atMs,
      ttlMs: this.ttlMs,
      ...(call.statusMessage === undefined ? {} : { statusMessage: call.statusMessage }),
      ...(call.structured ? { structured: true } : {}),
    };
    if (!(await this.settings.store.create(task))) {
      throw new Error(`a task with id ${call.callId} exists already`);
    }
    const early = this.early.get(call.callId);
    if (early !== undefined) {
      this.early.delete(call.callId);
      await this.settle(call.callId, early.result, call.structured);
    }
    return task;
  }

  /** Moves a call's working task by its result; false when there is no working task to move. */
  settle(callId: string, result: ToolCallResult, structured: boolean): Promise<boolean> {
    return this.settings.store.change(callId, taskChangeFor(result, structured, this.now()));
  }

  /** The task `taskId` if `principal` owns it; undefined otherwise (another's task is not revealed). */
  async owned(
    taskId: string,
    principal: { readonly id: string; readonly tenant: string },
  ): Promise<McpTask | undefined> {
    const task = await this.settings.store.get(taskId);
    return task !== undefined && task.tenant === principal.tenant && task.principalId === principal.id
      ? task
      : undefined;
  }

  /** Records a cancel request on a working task (the call itself runs on; see {@link McpTaskStatus}). */
  requestCancel(taskId: string): Promise<boolean> {
    return this.settings.store.change(taskId, {
      status: 'working',
      cancelRequested: true,
      statusMessage:
        'Cancellation requested. toolgate does not interrupt a call that may have started; the task ' +
        'ends with the call’s real outcome.',
      atMs: this.now(),
    });
  }

  /**
   * For the SDK client's `onResolution`: settles the task of a call whose definite result came after
   * the gateway stopped waiting. Never throws; a store failure is passed to `onError`.
   */
  onResolution(resolution: ToolCallResolution, onError: (err: unknown) => void): void {
    const { callId } = resolution.call;
    this.settings.store
      .get(callId)
      .then(async (task) => {
        if (task === undefined) {
          this.remember(callId, resolution.result);
          return;
        }
        await this.settle(callId, resolution.result, task.structured === true);
      })
      .catch(onError);
  }

  private remember(callId: string, result: ToolCallResult): void {
    const atMs = this.now();
    for (const [id, entry] of this.early) {
      if (this.early.size < EARLY_RESOLUTIONS && atMs - entry.atMs < EARLY_RESOLUTION_MS) break;
      this.early.delete(id);
    }
    this.early.set(callId, { result, atMs });
  }
}

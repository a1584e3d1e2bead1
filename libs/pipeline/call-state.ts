import type { ExecutionContext, NormalizedToolCall } from '../core/types.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import type { AttemptRecord } from '../core/audit-record.js';

/**
 * What the stages know about one call so far. Each stage reads what earlier stages set and adds its
 * own part; a stage never rewrites what an earlier stage decided.
 */
export interface CallState {
  readonly call: NormalizedToolCall;
  readonly ctx: ExecutionContext;
  /** The idempotency key the call arrived with (computed once by the SDK), if any. */
  readonly providedKey?: string;
  /** Aborted when the caller gives up (shutdown, batch deadline). */
  readonly signal: AbortSignal;
  /** Set by `resolve`. */
  tool?: ToolDefinition;
  /** Set by `validate-input`: the parsed, typed arguments. */
  args?: unknown;
  /** Set by `idempotency`. */
  idempotencyKey?: string;
  resourceKey?: string;
  /** Set by `idempotency` when the call must take the tool's safe path (a dead owner's lease). */
  takenOver?: boolean;
  /** Set by `execute`: the raw tool output (or the result a status check found), before output validation. */
  rawOutput?: unknown;
  /**
   * Set by `execute` when it knows: `applied` — the tool answered, or a status check found the
   * effect; `absent` — the effect definitely did not happen (nothing ran, or the downstream said it
   * refused). Unset: not known (nothing decided yet, or the outcome is unknown). The idempotency
   * layer settles its claim by it.
   */
  effect?: 'applied' | 'absent';
  /** Set by `validate-output`: what the model (and audit) may see. */
  output?: unknown;
  /** Tool invocations made for this call in this run. */
  toolInvocations: number;
  readonly attempts: AttemptRecord[];
}

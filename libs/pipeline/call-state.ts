import type { PrincipalRefusalReason } from '../auth/principal-refusal.js';
import type { ToolgateError } from '../core/errors.js';
import type { ExecutionContext, NormalizedToolCall, Principal } from '../core/types.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import type { AttemptRecord, PolicyContext } from '../core/audit-record.js';
import type { FactSeries } from '../core/aggregate-fact.js';

/**
 * What a call from outside brings for the ingress stages to judge, before anything of it is
 * trusted: the signed principal and the arguments as sent (see `RunOptions.signed`).
 */
export interface SignedIngress {
  /** The signed principal assertion; never logged, recorded or passed on. */
  readonly principalAssertion: string;
  /** The arguments as the model sent them: JSON text that must parse to an object. */
  readonly argumentsJson: string;
  /**
   * The instant the assertion's times are judged at (when the broker accepted the call, when that
   * can be trusted; see `acceptanceTimeMs`). Default: the verifier's now.
   */
  readonly judgedAtMs?: number;
  /**
   * A refusal of the arguments the transport already made (a request above the size limit, whose
   * arguments were never read): `parse-arguments` refuses with it.
   */
  readonly argumentsRefusal?: ToolgateError;
}

/** Why `verify-principal` refused the caller: for the executor's log line and metric, never the token. */
export interface PrincipalRefusal {
  /** From the closed list `PRINCIPAL_REFUSAL_REASONS` (`tenant` for a foreign tenant). */
  readonly reason: PrincipalRefusalReason;
  /** The verifier's sentence (what the audit decision records). */
  readonly detail: string;
}

/**
 * What the stages know about one call so far. Each stage reads what earlier stages set and adds its
 * own part; a stage never rewrites what an earlier stage decided.
 */
export interface CallState {
  /**
   * The call. On a signed run its arguments are empty until `parse-arguments` sets them; the
   * ingress stages set it, nothing after them does.
   */
  call: NormalizedToolCall;
  /**
   * Who and where. On a signed run its principal is {@link unverifiedPrincipal} until
   * `verify-principal` sets the verified one; the ingress stages set it, nothing after them does.
   */
  ctx: ExecutionContext;
  /** Set on a signed run only: what the ingress stages judge. */
  readonly signed?: SignedIngress;
  /** Set by `verify-principal` when it refused the caller. */
  principalRefusal?: PrincipalRefusal;
  /** The idempotency key the call arrived with (computed once by the SDK), if any. */
  readonly providedKey?: string;
  /** Aborted when the caller gives up (shutdown, batch deadline). */
  readonly signal: AbortSignal;
  /** Set by `resolve`. */
  tool?: ToolDefinition;
  /** Set by `validate-input`: the parsed, typed arguments. */
  args?: unknown;
  /**
   * Set by `business-rules` when the rules judged the call: what they knew (version, roles, facts,
   * a shadow policy's view), for the audit record.
   */
  policy?: PolicyContext;
  /**
   * Set by `business-rules` when the rules read aggregate facts: the series the call reads and, once
   * its effect settled, adds to (the idempotency layer records them).
   */
  factSeries?: readonly FactSeries[];
  /** Set by `idempotency`. */
  idempotencyKey?: string;
  resourceKey?: string;
  /** Set by `idempotency` when the call must take the tool's safe path (a dead owner's lease). */
  takenOver?: boolean;
  /**
   * Set by `idempotency` with a claim: when this executor's lease on the call ends, by its own
   * clock, counted from before the claim was asked for (so never later than the store's). Past it,
   * another executor may own the call: the execute stage sends nothing after it.
   */
  leaseExpiresAtMs?: number;
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

/** The principal id audit records carry when the caller's assertion could not be verified. */
export const UNVERIFIED_PRINCIPAL_ID = 'unverified';

/**
 * The stand-in principal of a signed run before `verify-principal` has run: no scopes, no roles,
 * so nothing could be authorized with it even if a stage were mis-ordered before verification.
 */
export function unverifiedPrincipal(tenant: string): Principal {
  return { id: UNVERIFIED_PRINCIPAL_ID, tenant, kind: 'service', scopes: [], roles: [] };
}

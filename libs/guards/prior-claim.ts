import { ToolgateError } from '../core/errors.js';
import { argumentsFingerprint, idempotencyKey } from '../core/idempotency-key.js';
import type { CallState } from '../pipeline/call-state.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { PeekResult } from '../ports/idempotency-store.js';
import { isReadOnlyTool } from './claim-record.js';
import { parseCallArguments } from './parse-arguments.js';

/** What the model is told when the caller cannot be verified but the call may already have run. */
export const UNVERIFIED_MAY_HAVE_RUN_MESSAGE =
  'The identity of the caller could not be verified now, and an identical call may already have ' +
  'been run: its outcome is unknown here and is being reconciled. Do not repeat it.';

/**
 * Whether a call whose principal could not be verified may nevertheless have taken effect: its
 * idempotency key already has a record of this call, in flight or completed. `none` means "not run"
 * is true. `may-have-run` carries the UNRESOLVED error the call must be answered with (and
 * dead-lettered), because answering "not run" for an effect that exists would mislead the requester
 * into repeating it; `reason` is for the audit record.
 */
export type PriorClaim =
  | { readonly kind: 'none' }
  | { readonly kind: 'may-have-run'; readonly error: ToolgateError; readonly reason: string };

/**
 * Looks at the store for the key of an unverified call (its coordinates, tool and `argumentsJson`)
 * with a read-only peek, so it never takes a lease, moves an expiry or leaves a trace that a
 * legitimate owner or a later delivery could trip on:
 *
 * - a read-only or unknown tool, unparseable arguments, or a key that is not this call's (the
 *   pipeline would refuse it) → `none`: no claim of this call can exist;
 * - no record, or a record of other arguments (another call's fingerprint) → `none`;
 * - completed, or in flight — with a live lease (running elsewhere) or a lapsed one (its owner
 *   stopped mid-call; the next verified delivery takes it over and the tool's safe path) →
 *   `may-have-run`. The stored result is never returned to a caller who could not be verified;
 * - the store unreachable → `may-have-run` too: whether the call ran cannot be told.
 * Never rejects.
 */
export async function priorClaim(
  deps: Pick<PipelineDeps, 'idempotency' | 'tools'>,
  state: Pick<CallState, 'call' | 'ctx' | 'providedKey'>,
  argumentsJson: string,
): Promise<PriorClaim> {
  const { call, ctx } = state;
  const resolved = deps.tools.resolve(call.name, {
    tenant: ctx.tenant,
    ...(call.version === undefined ? {} : { version: call.version }),
  });
  if (!resolved.ok || isReadOnlyTool(resolved.tool)) return { kind: 'none' };
  const parsed = parseCallArguments(argumentsJson);
  if (!parsed.ok) return { kind: 'none' };
  let key: string;
  let fingerprint: string;
  try {
    key = idempotencyKey(ctx, call.name, parsed.args);
    fingerprint = argumentsFingerprint(parsed.args);
  } catch {
    return { kind: 'none' };
  }
  if (state.providedKey !== undefined && state.providedKey !== key) return { kind: 'none' };
  let record: PeekResult;
  try {
    record = await deps.idempotency.peek(key);
  } catch {
    return mayHaveRun('the idempotency store could not say whether an identical call ran');
  }
  if (record.kind === 'absent' || record.fingerprint !== fingerprint) return { kind: 'none' };
  if (record.kind === 'completed') {
    return mayHaveRun(`an identical call completed earlier (${record.stored.outcome})`);
  }
  return record.leaseExpired
    ? mayHaveRun('an identical call was started by an executor that stopped mid-call')
    : mayHaveRun('an identical call is in flight');
}

function mayHaveRun(why: string): PriorClaim {
  return {
    kind: 'may-have-run',
    error: new ToolgateError('UNRESOLVED', UNVERIFIED_MAY_HAVE_RUN_MESSAGE, { retryable: false }),
    reason: `${why}, so it may have taken effect; not run again`,
  };
}

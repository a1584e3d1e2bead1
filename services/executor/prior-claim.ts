import { ToolgateError } from '../../libs/core/errors.js';
import { argumentsFingerprint, idempotencyKey } from '../../libs/core/idempotency-key.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import { isReadOnlyTool } from '../../libs/guards/claim-record.js';
import type { ToolResolver } from '../../libs/pipeline/deps.js';
import type { IdempotencyStore, PeekResult } from '../../libs/ports/idempotency-store.js';
import { parseCallArguments } from './call-arguments.js';

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
 * Looks at the store for the key of an unverified call with a read-only peek, so it never takes a
 * lease, moves an expiry or leaves a trace that a legitimate owner or a later delivery could trip on:
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
  deps: { readonly idempotency: IdempotencyStore; readonly tools: ToolResolver },
  request: ToolCallRequestedEvent,
): Promise<PriorClaim> {
  const resolved = deps.tools.resolve(request.tool, {
    tenant: request.tenant,
    ...(request.toolVersion === null ? {} : { version: request.toolVersion }),
  });
  if (!resolved.ok || isReadOnlyTool(resolved.tool)) return { kind: 'none' };
  const parsed = parseCallArguments(request.argumentsJson);
  if (!parsed.ok) return { kind: 'none' };
  let key: string;
  let fingerprint: string;
  try {
    key = idempotencyKey(request, request.tool, parsed.args);
    fingerprint = argumentsFingerprint(parsed.args);
  } catch {
    return { kind: 'none' };
  }
  if (request.idempotencyKey !== '' && request.idempotencyKey !== key) return { kind: 'none' };
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

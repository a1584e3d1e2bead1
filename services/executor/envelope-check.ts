import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';

/** Longest id the executor accepts (the audit store refuses longer ones as producer bugs). */
export const MAX_ID_LENGTH = 512;

/**
 * What the executor can do with a decoded request, judged on its envelope alone (never on the
 * arguments, which the guard pipeline judges):
 * - `ok`: run it;
 * - `unroutable`: there is no valid call id or reply address, so no result can reach the requester;
 *   it is dead-lettered as POISON;
 * - `malformed`: it can be answered but not run (empty tenant, task or tool, negative step or
 *   index): the requester gets a MALFORMED_EVENT result and the producer bug is dead-lettered.
 */
export type EnvelopeVerdict =
  | { readonly kind: 'ok' }
  | { readonly kind: 'unroutable'; readonly reason: string }
  | { readonly kind: 'malformed'; readonly reason: string };

/**
 * Checks a decoded request's envelope. `replyTopics` maps each topic the executor may answer on to
 * its partition count: the reply address comes from an untrusted producer, and without this check a
 * producer could make the executor write results into any topic (the audit topic, say) or into a
 * partition that does not exist, where publishing would fail forever and stall the partition.
 * Pure and total.
 */
export function checkEnvelope(
  event: ToolCallRequestedEvent,
  replyTopics: Readonly<Record<string, number>>,
): EnvelopeVerdict {
  if (!isId(event.callId)) return { kind: 'unroutable', reason: 'the call id is empty or too long' };
  const partitions = Object.hasOwn(replyTopics, event.replyTopic) ? replyTopics[event.replyTopic] : undefined;
  if (partitions === undefined) {
    return {
      kind: 'unroutable',
      reason: `reply topic ${JSON.stringify(event.replyTopic)} is not a results topic`,
    };
  }
  if (
    !Number.isInteger(event.replyPartition) ||
    event.replyPartition < 0 ||
    event.replyPartition >= partitions
  ) {
    return {
      kind: 'unroutable',
      reason: `reply partition ${event.replyPartition} is outside 0..${partitions - 1} of ${event.replyTopic}`,
    };
  }
  const missing = (['tenant', 'taskId', 'tool'] as const).filter((field) => !isId(event[field]));
  if (missing.length > 0) return { kind: 'malformed', reason: `${missing.join(', ')} empty or too long` };
  if (event.step < 0 || event.index < 0) return { kind: 'malformed', reason: 'negative step or index' };
  if (event.providerCallId.length > MAX_ID_LENGTH || event.resourceKey.length > MAX_ID_LENGTH) {
    return { kind: 'malformed', reason: 'providerCallId or resourceKey too long' };
  }
  return { kind: 'ok' };
}

function isId(value: string): boolean {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH;
}

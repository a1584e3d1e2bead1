import type { AuditRecordEvent, DeadLetterEvent, ToolCallResultEvent } from '../../libs/events/contracts.js';
import type { TopicNames } from '../../libs/events/topics.js';
import type { EventCodec } from '../../libs/events/event-codec.js';
import type { Outgoing } from './publish-outcome.js';

/** What one handled message produces; any part may be absent (poison has no result, no audit). */
export interface CallOutputs {
  readonly result?: {
    readonly event: ToolCallResultEvent;
    readonly topic: string;
    readonly partition: number;
  };
  readonly audit?: AuditRecordEvent;
  readonly deadLetter?: DeadLetterEvent;
}

/**
 * Encodes a call's outputs into publish phases: [audit record, dead letter] first, then the result
 * (see publishPhases for why). Keys:
 * - result: the call id, sent to the requester's own partition of its reply topic;
 * - audit record: the tenant, so one tenant's records stay in order on one partition and the audit
 *   sink can append them to the tenant's hash chain in production order;
 * - dead letter: the original message key (the resource), so one resource's cases stay in order;
 *   the dead-letter id when the original had no key.
 * Every message carries the call's trace headers. Rejects only when encoding does (a defect).
 */
export async function encodeOutputs(
  codec: EventCodec,
  topics: TopicNames,
  outputs: CallOutputs,
  headers: Readonly<Record<string, string>>,
  originalKey: string,
): Promise<Outgoing[][]> {
  const first: Outgoing[] = [];
  const second: Outgoing[] = [];
  if (outputs.audit !== undefined) {
    first.push({
      what: 'audit',
      topic: topics.audit,
      message: { key: outputs.audit.tenant, value: await codec.encode('audit', outputs.audit), headers },
    });
  }
  if (outputs.deadLetter !== undefined) {
    first.push({
      what: 'dead letter',
      topic: topics.dlq,
      message: {
        key: originalKey === '' ? outputs.deadLetter.deadLetterId : originalKey,
        value: await codec.encode('dlq', outputs.deadLetter),
        headers,
      },
    });
  }
  if (outputs.result !== undefined) {
    second.push({
      what: 'result',
      topic: outputs.result.topic,
      message: {
        key: outputs.result.event.callId,
        value: await codec.encode('results', outputs.result.event),
        headers,
        partition: outputs.result.partition,
      },
    });
  }
  return [first, second].filter((phase) => phase.length > 0);
}

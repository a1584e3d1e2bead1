import { signPrincipal, type PrincipalSigningKey } from '../../../libs/auth/sign-principal.js';
import { idempotencyKey } from '../../../libs/core/idempotency-key.js';
import type { Principal } from '../../../libs/core/types.js';
import type { ToolCallRequestedEvent } from '../../../libs/events/contracts.js';
import type { EventPublisher } from '../../../libs/ports/event-bus.js';
import type { EventCodec } from '../../../libs/events/event-codec.js';

/** The span id of the requester's span in the `traceparent` every test request carries. */
export const REQUEST_SPAN_ID = '00f067aa0ba902b7';

/** How a test signs principals, as an agent backend's auth layer would. */
export interface TestSigning {
  readonly key: PrincipalSigningKey;
  readonly issuer: string;
  readonly audience: string;
  readonly kid: string;
  readonly ttlSeconds: number;
}

/**
 * A calls event as the SDK publishes it: `base` (a stack's defaults) with `principal` signed, then
 * `fields` on top, and the idempotency key computed from the call's coordinates, tool and
 * arguments unless `fields` names one. Used by the executor's unit harness and integration stack.
 */
export async function signedRequest(
  base: Omit<ToolCallRequestedEvent, 'principalAssertion' | 'idempotencyKey'>,
  principal: Principal,
  signing: TestSigning,
  fields: Partial<ToolCallRequestedEvent>,
): Promise<ToolCallRequestedEvent> {
  const event: ToolCallRequestedEvent = {
    ...base,
    idempotencyKey: '',
    principalAssertion: await signPrincipal(principal, signing.key, {
      issuer: signing.issuer,
      audience: signing.audience,
      ttlSeconds: signing.ttlSeconds,
      kid: signing.kid,
    }),
    ...fields,
  };
  const key =
    fields.idempotencyKey ??
    idempotencyKey(
      { tenant: event.tenant, taskId: event.taskId, step: event.step, index: event.index },
      event.tool,
      JSON.parse(event.argumentsJson),
    );
  return { ...event, idempotencyKey: key };
}

/**
 * Publishes requests one by one, in order, each keyed by its resource key and carrying a
 * `traceparent` of the request's trace with span {@link REQUEST_SPAN_ID}.
 */
export async function publishRequests(
  publisher: EventPublisher,
  codec: EventCodec,
  topic: string,
  requests: readonly ToolCallRequestedEvent[],
): Promise<void> {
  for (const request of requests) {
    await publisher.publish(topic, [
      {
        key: request.resourceKey,
        value: await codec.encode('calls', request),
        headers: { traceparent: `00-${request.traceId}-${REQUEST_SPAN_ID}-01` },
      },
    ]);
  }
}

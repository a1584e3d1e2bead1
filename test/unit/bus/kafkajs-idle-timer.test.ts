import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { fixKafkaJsIdleTimer } from '../../../libs/bus/kafka/kafkajs-idle-timer.js';

interface Queue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
}

const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as new (
  options: Record<string, unknown>,
) => Queue;

const silent = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
const queues: Queue[] = [];

/** A request queue of one connection, as kafkajs builds it. */
function queue(): Queue {
  const q = new RequestQueue({
    instrumentationEmitter: { emit: () => undefined },
    maxInFlightRequests: null,
    requestTimeout: 30_000,
    enforceRequestTimeout: true,
    clientId: 'test',
    broker: 'test:9092',
    logger: silent,
  });
  queues.push(q);
  return q;
}

afterEach(() => {
  for (const q of queues.splice(0))
    if (q.throttleCheckTimeoutId !== null) clearTimeout(q.throttleCheckTimeoutId);
});

describe('fixKafkaJsIdleTimer', () => {
  it('leaves no timer armed on an idle connection (kafkajs re-armed a 1 ms one for good)', () => {
    fixKafkaJsIdleTimer();
    const q = queue();
    // What every response does: check the queue. Nothing is pending, nothing throttled.
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('still checks again while requests wait: at the end of a throttle', () => {
    fixKafkaJsIdleTimer();
    const q = queue();
    q.pending.push({ correlationId: 1 });
    q.throttledUntil = Date.now() + 60_000; // throttled: nothing can be sent yet
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    expect(q.pending).toHaveLength(1);
  });
});
